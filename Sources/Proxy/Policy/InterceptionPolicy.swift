import FlowTerms

/// The inspect-or-pass-through decision for one TLS connection: a value in, a decision (with its
/// reason) out. No I/O: the engine gathers the facts and obeys the answer.
///
/// Inspect only when every condition holds, checked in this order (the first failing one is the
/// reason): inspection is on; a CA usable for TLS is loaded; pinning memory recalls nothing for
/// this client, host and port (`PinningRecall`); no `--ignore-hosts` pattern matches; when `--allow-hosts` patterns exist, one matches.
public struct InterceptionPolicy: Sendable {
    public var inspectionEnabled: Bool
    public var caAvailable: Bool
    public var ignoreHosts: [HostPattern]
    public var allowHosts: [HostPattern]

    public init(inspectionEnabled: Bool, caAvailable: Bool, ignoreHosts: [HostPattern] = [], allowHosts: [HostPattern] = []) {
        self.inspectionEnabled = inspectionEnabled
        self.caAvailable = caAvailable
        self.ignoreHosts = ignoreHosts
        self.allowHosts = allowHosts
    }

    /// The names a connection is known by: the SNI and the destination (name or address); a
    /// pattern matching any of them counts, as in mitmproxy's `ignore_connection`.
    public struct Target: Sendable, Hashable {
        public var sni: String?
        public var destinationHost: String?
        public var port: UInt16
        public init(sni: String?, destinationHost: String?, port: UInt16) {
            self.sni = sni
            self.destinationHost = destinationHost
            self.port = port
        }
        var names: [String] {
            var out: [String] = []
            if let sni { out.append(sni) }
            if let destinationHost, destinationHost != sni { out.append(destinationHost) }
            return out
        }
    }

    public enum Action: Sendable, Hashable {
        case inspect
        case passThrough
    }

    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        case inspect
        case inspectionOff
        case noCertificateAuthority
        /// Pinning memory recalled this client, host and port.
        case remembered(PinningRecall)
        case ignored(pattern: String)
        case notAllowed
        /// Decided outside the policy: the client offers only TLS versions below tv's minimum, so
        /// the client leg could not be completed.
        case clientVersionTooOld

        public var description: String {
            switch self {
            case .inspect: return "inspection is on and nothing excludes this host"
            case .inspectionOff: return "inspection is off"
            case .noCertificateAuthority: return "no CA usable for TLS is loaded"
            case .remembered(.remembered(.pinned)), .remembered(.retry):
                return "this client broke off tv's handshake with this host, or closed right after it, before (pinning)"
            case .remembered(.remembered(.lacksRoot)): return "this client lacked tv's root for this host before"
            case .remembered(.hostWide): return "an older tv remembered this host as pinned for every client"
            case .ignored(let pattern): return "the host matches --ignore-hosts '\(pattern)'"
            case .notAllowed: return "the host matches no --allow-hosts pattern"
            case .clientVersionTooOld: return "the client offers only TLS versions below tv's minimum"
            }
        }
    }

    public struct Decision: Sendable, Hashable {
        public var action: Action
        public var reason: Reason
        /// The status a passed-through flow gets: kept private for what pinning memory recalled,
        /// else encrypted.
        public var passThroughStatus: FlowStatus {
            if case .remembered = reason { return .keptPrivate }
            return .encrypted
        }
    }

    /// Decides for `target`. `recall` (pinning memory for this client, host and port) is asked
    /// only when it matters, at most once.
    public func decide(_ target: Target, recall: () -> PinningRecall?) -> Decision {
        guard inspectionEnabled else { return Decision(action: .passThrough, reason: .inspectionOff) }
        guard caAvailable else { return Decision(action: .passThrough, reason: .noCertificateAuthority) }
        if let recalled = recall() { return Decision(action: .passThrough, reason: .remembered(recalled)) }
        let names = target.names
        for pattern in ignoreHosts where names.contains(where: { pattern.matches(host: $0, port: target.port) }) {
            return Decision(action: .passThrough, reason: .ignored(pattern: pattern.source))
        }
        if !allowHosts.isEmpty {
            let allowed = allowHosts.contains { pattern in names.contains { pattern.matches(host: $0, port: target.port) } }
            if !allowed { return Decision(action: .passThrough, reason: .notAllowed) }
        }
        return Decision(action: .inspect, reason: .inspect)
    }
}

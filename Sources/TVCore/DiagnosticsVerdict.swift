import Proxy

/// The figures `DiagnosticsVerdict` is read from: a live session's inspection counters
/// (`DiagnosticsCounters`, the `offered.*` values) reduced to what tells the cases apart.
public struct DiagnosticsFacts: Sendable, Equatable {
    /// Inspection is on in the session.
    public var inspectionOn: Bool
    /// The session has a CA to make certificates with.
    public var caLoaded: Bool
    /// Closed connections offered for inspection (tv read their first bytes while it was on).
    public var offered: UInt64
    /// Of those, not TLS.
    public var notTLS: UInt64
    /// Of those, taken over (both legs' handshakes finished).
    public var inspected: UInt64
    /// Of those, passed through by a rule (`--ignore-hosts`, `--allow-hosts`, an old TLS version).
    public var passedByRule: UInt64
    /// Of those, clients that pin: possible pinning now, or kept private for pinning before.
    public var pinned: UInt64
    /// Of `pinned`, those kept private for pinning (the client came back): the rest only closed
    /// at or right after tv's handshake, which a probe does too.
    public var pinnedConfirmed: UInt64
    /// Of those, clients that lack tv's root: refused it now, or kept private for it before.
    public var lacksRoot: UInt64
    /// Of those, offered while the session had no CA.
    public var noCA: UInt64
    /// The takeover failure seen most (its leg and reason, `InspectionOutcome.failed`), if any.
    public var commonestFailure: LegFailureCount?
    /// Connections accepted since the session started, those of them that closed failed, and
    /// (transparent mode) those reset because no rule redirected them: told apart from nothing
    /// at all when none was offered (a trial's reverse mode, its target refusing, read "nothing
    /// has come through tv" beside three failed connections).
    public var accepted: UInt64 = 0
    public var failed: UInt64 = 0
    public var notRedirected: UInt64 = 0
    /// Why the data folder's CA is in doubt (`CADoubt.message`), when it is: not "missing" (an
    /// unreadable key is doubt, never "no CA": DESIGN §4; a trial's diag said missing and
    /// advised `tv inspect on`).
    public var caDoubt: String?

    /// A takeover failure and how often it happened.
    public struct LegFailureCount: Sendable, Equatable {
        public var leg: ConnectionFailure.Side
        public var reason: String
        public var count: UInt64
        public init(leg: ConnectionFailure.Side, reason: String, count: UInt64) {
            self.leg = leg
            self.reason = reason
            self.count = count
        }
    }

    public init(inspectionOn: Bool, caLoaded: Bool = true, offered: UInt64 = 0, notTLS: UInt64 = 0, inspected: UInt64 = 0,
                passedByRule: UInt64 = 0, pinned: UInt64 = 0, pinnedConfirmed: UInt64? = nil, lacksRoot: UInt64 = 0, noCA: UInt64 = 0,
                commonestFailure: LegFailureCount? = nil) {
        self.pinnedConfirmed = pinnedConfirmed ?? pinned
        self.inspectionOn = inspectionOn
        self.caLoaded = caLoaded
        self.offered = offered
        self.notTLS = notTLS
        self.inspected = inspected
        self.passedByRule = passedByRule
        self.pinned = pinned
        self.lacksRoot = lacksRoot
        self.noCA = noCA
        self.commonestFailure = commonestFailure
    }

    /// Read from a session's `status` values (missing counters are 0).
    public init(values: [String: String]) {
        func n(_ key: String) -> UInt64 { values["offered." + key].flatMap { UInt64($0) } ?? 0 }
        // The most counted; a tie goes to the first key in order (client before server).
        var commonest: LegFailureCount?
        for key in values.keys.sorted() where key.hasPrefix("offered.failed.") {
            let parts = key.split(separator: ".").map(String.init)
            guard parts.count == 4, let count = values[key].flatMap({ UInt64($0) }), count > 0 else { continue }
            if let c = commonest, c.count >= count { continue }
            commonest = LegFailureCount(leg: parts[2] == "server" ? .server : .client, reason: parts[3], count: count)
        }
        self.init(inspectionOn: values["inspection"] == "on", caLoaded: values["ca"] != "missing" && values["ca"] != "in doubt",
                  offered: n("total"), notTLS: n("notTLS"), inspected: n("inspected"), passedByRule: n("passedByRule"),
                  pinned: n("clientRefused.possiblePinning") + n("keptPrivate.pinned"), pinnedConfirmed: n("keptPrivate.pinned"),
                  lacksRoot: n("clientRefused.lacksRoot") + n("keptPrivate.lacksRoot"),
                  noCA: n("noCA"), commonestFailure: commonest)
        caDoubt = values["ca"] == "in doubt" ? (values["caDoubt"] ?? "") : nil
        accepted = values["accepted"].flatMap { UInt64($0) } ?? 0
        failed = values[SessionStatusPresentation.closedKey(.failed)].flatMap { UInt64($0) } ?? 0
        notRedirected = values["notRedirected"].flatMap { UInt64($0) } ?? 0
    }
}

/// `tv diag`'s first sentence: whether looking inside TLS is working in the live session, told
/// apart from the cases that look the same from outside (nothing offered, not TLS, pinning
/// clients, connections named and never taken over). Pure: facts in, one case and its sentence out.
///
/// Read in this order, the first that holds wins: no session; inspection off; no CA now; nothing
/// offered (nothing came, or what came never got that far);
/// nothing offered was TLS; something was inspected; every TLS connection passed by a rule;
/// every other one's client pins; else never taken over, because the session has no CA, else
/// because the clients lack tv's root (when that is the commonest refusal), else the commonest
/// leg failure.
public enum DiagnosticsVerdict: Sendable, Equatable {
    case noSession
    case inspectionOff
    /// The data folder's CA is in doubt (`reason`), so nothing can be inspected until it is
    /// fixed, whatever the switch says.
    case caInDoubt(reason: String)
    /// Inspection is on and the session has no CA now (removed while it ran, or none at start):
    /// nothing can be taken over from now, whatever was before (`inspectedBefore`).
    case noCANow(inspectedBefore: UInt64)
    case nothingOffered
    /// None offered, though `accepted` connections came: `failed` of them failed first (a
    /// server not reached), `notRedirected` reached the listener directly (transparent mode).
    case noneOfferedOf(accepted: UInt64, failed: UInt64, notRedirected: UInt64)
    /// `offered` connections, none TLS.
    case notTLS(offered: UInt64)
    /// `inspected` of `tls` TLS connections offered were taken over.
    case working(inspected: UInt64, tls: UInt64)
    /// Every TLS connection offered (`tls`) was passed through by a rule.
    case allByRule(tls: UInt64)
    /// Every connection tv tried to take over (`attempts`) came from a client that pins;
    /// `confirmed` of them were passed through because it came back (0: each only closed at or
    /// right after the handshake, which a probe such as `openssl s_client </dev/null` does too).
    case allPinned(attempts: UInt64, confirmed: UInt64)
    /// `attempts` connections were named and never taken over; `causing` of them for `cause`
    /// (the commonest; the sentence says "of them" when others had other causes: a trial read
    /// one cause given for a count that mixed several).
    case neverTakenOver(attempts: UInt64, cause: Cause, causing: UInt64)

    /// Why connections were never taken over.
    public enum Cause: Sendable, Equatable {
        /// The session has no CA to make certificates with.
        case noCertificateAuthority
        /// The clients do not trust tv's root.
        case clientsLackRoot
        /// A leg's handshake failed (the commonest leg and reason; nil: none recorded).
        case legFailed(ConnectionFailure.Side, reason: String?)
    }

    /// The verdict for a session (`facts` nil: no session is running).
    public static func of(_ facts: DiagnosticsFacts?) -> DiagnosticsVerdict {
        guard let f = facts else { return .noSession }
        if let doubt = f.caDoubt, !f.caLoaded { return .caInDoubt(reason: doubt) }
        guard f.inspectionOn else { return .inspectionOff }
        // What holds now before what was counted: a trial's `tv ca remove` under a running
        // session still read "Inspection is working: 1 of 6 … inspected".
        guard f.caLoaded else { return .noCANow(inspectedBefore: f.inspected) }
        guard f.offered > 0 else {
            return f.accepted == 0 ? .nothingOffered : .noneOfferedOf(accepted: f.accepted, failed: f.failed, notRedirected: f.notRedirected)
        }
        let tls = f.offered - min(f.notTLS, f.offered)
        guard tls > 0 else { return .notTLS(offered: f.offered) }
        if f.inspected > 0 { return .working(inspected: f.inspected, tls: tls) }
        let attempts = tls - min(f.passedByRule, tls)
        guard attempts > 0 else { return .allByRule(tls: tls) }
        if f.pinned >= attempts { return .allPinned(attempts: attempts, confirmed: min(f.pinnedConfirmed, attempts)) }
        if f.noCA > 0 || !f.caLoaded { return .neverTakenOver(attempts: attempts, cause: .noCertificateAuthority, causing: attempts) }
        if f.lacksRoot > 0, f.lacksRoot >= (f.commonestFailure?.count ?? 0) {
            return .neverTakenOver(attempts: attempts, cause: .clientsLackRoot, causing: min(f.lacksRoot, attempts))
        }
        return .neverTakenOver(attempts: attempts, cause: .legFailed(f.commonestFailure?.leg ?? .client, reason: f.commonestFailure?.reason),
                               causing: min(f.commonestFailure?.count ?? attempts, attempts))
    }

    /// The sentence.
    public var sentence: String {
        func g(_ n: UInt64) -> String { Units.grouped(Int64(clamping: n)) }
        switch self {
        case .noSession:
            return "No tv session is running, so there is nothing to diagnose (the counters start at zero with every session); " + SessionStatusPresentation.startOne + "."
        case .inspectionOff:
            return "Inspection is off in this session, so no connection is offered for inspection: everything is passed through untouched and still recorded; `tv inspect on` (after `tv setup`) turns it on."
        case .caInDoubt(let reason):
            return "Nothing can be inspected until the data folder's CA is fixed; the running session takes it at once then. " + reason
        case .noCANow(let before):
            let earlier = before == 0 ? "" : " (\(before) \(before == 1 ? "connection was" : "connections were") inspected while it had one)"
            return "Inspection is on, but this session has no CA now\(earlier): nothing is inspected until there is one, and connections pass through untouched; make or bring one with `tv ca create` or `tv ca import` (the running session takes it at once)."
        case .nothingOffered:
            return "Inspection is on, and no connection has been offered for inspection yet: nothing has come through tv since it started, so check that clients use it (their proxy setting, or the redirect rules and routes of --mode transparent and tun)."
        case let .noneOfferedOf(accepted, failed, notRedirected):
            let failedNow = min(failed, accepted), missed = min(notRedirected, accepted - failedNow)
            var why: [String] = []
            if failedNow > 0 { why.append("\(g(failedNow)) failed before that (a server not reached, a refused request: `tv flows --status failed` says why)") }
            if missed > 0 { why.append("\(g(missed)) reached tv's port directly, not redirected by a rule (reset, no flow: check the rule's match)") }
            let rest = accepted - failedNow - missed
            if rest > 0 { why.append("\(g(rest)) \(why.isEmpty ? "" : "more ")\(rest == 1 ? "is" : "are") still connecting or ended before the client said anything (`tv flows` lists them)") }
            return "Inspection is on, and \(g(accepted)) \(accepted == 1 ? "connection" : "connections") came through tv, none of them far enough to be offered for inspection: " + why.joined(separator: "; ") + "."
        case .notTLS(let n):
            let what = n == 1 ? "the 1 connection offered was not TLS" : "none of the \(g(n)) connections offered was TLS"
            return "Inspection is on, and \(what): plain HTTP or a protocol of its own, so there was nothing to take over."
        case let .working(inspected, tls):
            return "Inspection is working: \(g(inspected)) of \(g(tls)) TLS \(tls == 1 ? "connection" : "connections") offered \(inspected == 1 ? "was" : "were") inspected."
        case .allByRule(let tls):
            return "Every TLS connection offered (\(g(tls))) was passed through by a rule (--ignore-hosts, --allow-hosts, or a TLS version below tv's minimum), so nothing was inspected."
        case let .allPinned(n, confirmed) where confirmed == 0:
            // Not yet a verdict: a trial's single `s_client </dev/null` read as "every client pins".
            return "Every client tv tried to inspect (\(g(n)) \(n == 1 ? "connection" : "connections")) closed at or right after tv's handshake without sending anything: a client that pins its certificate does this, and so does a probe such as `openssl s_client </dev/null`; one that comes back is passed through untouched (`tv pinned` lists it then)."
        case let .allPinned(n, _):
            return "Every client tv tried to inspect pins its certificate (\(g(n)) \(n == 1 ? "connection" : "connections")): tv passes them through untouched, which is the pinning rule working, not a fault."
        case let .neverTakenOver(n, cause, causing):
            let named = "\(g(n)) \(n == 1 ? "connection was" : "connections were") named and still never taken over"
            // Some had other causes: the counters below say which.
            let head = causing < n ? named + ", \(g(causing)) of them because" : named + ", because"
            let keeps = "browsing keeps working, because tv passes such connections through untouched"
            switch cause {
            case .noCertificateAuthority:
                return "\(head) this session has no CA to make certificates with; \(keeps), so check `tv ca status` and make one with `tv setup`."
            case .clientsLackRoot:
                return "\(head) their clients do not trust tv's root; \(keeps), so give them the root (`tv setup`, or `curl --cacert` with the file `tv ca status` names) and let tv try again with `tv pinned forget HOST`."
            case let .legFailed(.server, reason):
                // A server tv cannot verify is not passed through: the flow fails (an HTTP client
                // gets tv's 502 saying why), so nothing here keeps browsing working.
                let why = reason.map { " (most often: \($0))" } ?? ""
                return "\(head) tv's handshake with the server failed\(why); those connections failed (an HTTP client got tv's 502 saying why), "
                    + "so check the reasons with `tv flows --status failed`, and for a server with a private CA give it to tv with --upstream-ca FILE."
            case let .legFailed(.client, reason):
                let why = reason.map { " (most often: \($0))" } ?? ""
                return "\(head) tv's handshake with the client failed\(why); \(keeps), so check the reasons with `tv flows --status failed`."
            }
        }
    }
}

import FlowTerms
import Foundation
import Proxy
import Synchronization

/// What a live session notes about the flows it closes for `tv diag` and `tv top`, beside the
/// engine's counters: the last failures with their times, connections named by what they
/// announced, and the busiest hosts. Fed by `FlowStoreSink.flowClosed` on the loops' threads (a
/// lock taken once per closed flow, never on the byte path); read by the control socket.
public final class SessionTally: Sendable {
    /// One failure, as `tv diag` lists it.
    public struct RecentError: Sendable, Equatable {
        /// When the flow closed (µs since the epoch).
        public var atMicros: Int64
        /// The host, or the server address when no name was seen.
        public var host: String
        /// The flow's failure sentence (`FlowFacts.error`).
        public var sentence: String
    }

    /// How many failures are kept (the newest).
    public static let recentErrorLimit = 5
    /// How many hosts are tracked for the talkers list before the quietest are forgotten.
    public static let hostLimit = 512

    private struct State {
        var errors: [RecentError] = []
        var namedByConnection: [HostOrigin: UInt64] = [:]
        var hosts: [String: HostTotals] = [:]
    }

    /// A host's totals this session (closed flows only).
    public struct HostTotals: Sendable, Equatable {
        public var flows: UInt64 = 0
        public var bytesFromServer: UInt64 = 0
        public var bytesFromClient: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Notes a closed flow.
    public func closed(_ facts: FlowFacts, atMicros: Int64) {
        let host = facts.host ?? facts.server?.address ?? "?"
        state.withLock { s in
            if facts.status == .failed, let sentence = facts.error {
                s.errors.append(RecentError(atMicros: atMicros, host: host, sentence: sentence))
                if s.errors.count > SessionTally.recentErrorLimit { s.errors.removeFirst(s.errors.count - SessionTally.recentErrorLimit) }
            }
            if facts.host != nil { s.namedByConnection[facts.hostOrigin, default: 0] &+= 1 }
            if s.hosts[host] == nil, s.hosts.count >= SessionTally.hostLimit {
                // Forget the quietest host to keep the map bounded.
                if let quietest = s.hosts.min(by: { $0.value.bytesFromServer &+ $0.value.bytesFromClient < $1.value.bytesFromServer &+ $1.value.bytesFromClient })?.key {
                    s.hosts[quietest] = nil
                }
            }
            s.hosts[host, default: HostTotals()].flows &+= 1
            s.hosts[host, default: HostTotals()].bytesFromServer &+= facts.bytesFromServer
            s.hosts[host, default: HostTotals()].bytesFromClient &+= facts.bytesFromClient
        }
    }

    /// The status key of the count of closed flows named after a looked-up name (DNS).
    public static let namedFromLookupsKey = "names.fromLookups.connectionsNamed"

    /// The closed flows named after a looked-up name so far.
    public var namedFromLookups: UInt64 { state.withLock { $0.namedByConnection[.dns] ?? 0 } }

    /// The status key of the count of closed flows named by `origin` (`names.origin.sni`,
    /// `names.origin.dnsQuestion`): the case's name, since status keys are camelCase words
    /// (`tv status --json` nests them at the dots); the stored word (`dns_question`) is the
    /// metrics label and the flows' `hostOrigin`.
    public static func originKey(_ origin: HostOrigin) -> String { "names.origin." + String(describing: origin) }

    /// The control-socket values: `errors.N.at` / `.host` / `.sentence` (N from 1, newest first),
    /// `names.fromTCP` (connections that announced their host: SNI, CONNECT, SOCKS5, reverse, Host header),
    /// `names.fromLookups.connectionsNamed` (named after a DNS answer), `names.origin.ORIGIN` (by
    /// each `HostOrigin` but `none`: `names.origin.sni`, …) and `talkers.N.host` /
    /// `.flows` / `.bytesFromServer` / `.bytesFromClient` for the ten busiest hosts by bytes.
    public var values: [String: String] {
        state.withLock { s in
            var out: [String: String] = [:]
            for (i, e) in s.errors.reversed().enumerated() {
                out["errors.\(i + 1).at"] = String(e.atMicros)
                out["errors.\(i + 1).host"] = e.host
                out["errors.\(i + 1).sentence"] = e.sentence
            }
            let announced: [HostOrigin] = [.sni, .connect, .socks, .reverse, .httpHost]
            out["names.fromTCP"] = String(announced.reduce(UInt64(0)) { $0 &+ (s.namedByConnection[$1] ?? 0) })
            out[SessionTally.namedFromLookupsKey] = String(s.namedByConnection[.dns] ?? 0)
            for origin in HostOrigin.allCases where origin != .none {
                out[SessionTally.originKey(origin)] = String(s.namedByConnection[origin] ?? 0)
            }
            let top = s.hosts.sorted {
                let a = $0.value.bytesFromServer &+ $0.value.bytesFromClient, b = $1.value.bytesFromServer &+ $1.value.bytesFromClient
                return a != b ? a > b : $0.key < $1.key
            }.prefix(10)
            for (i, (host, t)) in top.enumerated() {
                out["talkers.\(i + 1).host"] = host
                out["talkers.\(i + 1).flows"] = String(t.flows)
                out["talkers.\(i + 1).bytesFromServer"] = String(t.bytesFromServer)
                out["talkers.\(i + 1).bytesFromClient"] = String(t.bytesFromClient)
            }
            return out
        }
    }
}

import FlowStore
import Proxy
import TVHome

/// What a list of request rows says of the flows it shows whose connections had requests tv
/// read and counted without writing their rows (`FlowRecord.requestsLeftOut`: past the row
/// allowance, or opened while 256 HTTP/2 streams were followed): `tv requests` (a note on
/// standard error, and `requestsLeftOut` in --json), `tv requests --filter`, and `tv export
/// har`'s log comment. Only `tv flow` said it, so a list of a flood's last rows read as the
/// whole connection (a hostile-input trial). Pure: the counts in, the sentence and JSON out.
public struct LeftOutRequestsNotice: Sendable, Equatable {
    /// One flow and how many of its requests were counted, not written.
    public struct Flow: Sendable, Equatable {
        public var flow: Int64
        public var count: Int64
        /// The shared store's instance that recorded it (`tv requests --store`); nil: local.
        public var instance: InstanceIdentity?
        /// The flow as the lists print it: `12`, or `MACHINE:12` (`MACHINE/PREFIX:12` when several
        /// instances among the flows carry that machine name).
        public var label: String
        public init(flow: Int64, count: Int64, instance: InstanceIdentity? = nil, label: String? = nil) {
            self.flow = flow
            self.count = count
            self.instance = instance
            self.label = label ?? String(flow)
        }
    }

    /// The flows with requests left out, by id (by instance, then id, from the shared store).
    public let flows: [Flow]
    /// The flows are the shared store's: `tv flow LABEL --store URL` reads one.
    let shared: Bool

    /// The most flows one sentence names (the rest are counted).
    static let namedCap = 10

    public init(_ flows: [(flow: Int64, count: Int64)]) {
        self.flows = flows.filter { $0.count > 0 }.sorted { $0.flow < $1.flow }.map { Flow(flow: $0.flow, count: $0.count) }
        shared = false
    }

    /// The shared store's counts (`SharedFlowHistory.requestsLeftOut(shownIn:)`), each flow named
    /// as `tv requests --store` and `tv flows --store` name it (`MACHINE:ID`).
    public init(shared flows: [(instance: InstanceIdentity, flow: Int64, count: Int64)]) {
        var ids: [String: Set<String>] = [:]
        for f in flows { ids[f.instance.machine, default: []].insert(f.instance.id) }
        self.flows = flows.filter { $0.count > 0 }
            .sorted { ($0.instance.machine, $0.instance.id, $0.flow) < ($1.instance.machine, $1.instance.id, $1.flow) }
            .map { f in
                let qualified = (ids[f.instance.machine]?.count ?? 0) > 1
                let name = TerminalText.line(f.instance.machine) + (qualified ? "/" + String(f.instance.id.prefix(8)) : "")
                return Flow(flow: f.flow, count: f.count, instance: f.instance, label: name + ":" + String(f.flow))
            }
        shared = true
    }

    /// Why rows are left out: "tv writes a connection's first 10,000 requests, then 10 a second
    /// (…), and follows at most 256 of its HTTP/2 streams at once (…)".
    public static func bounds(_ allowance: RequestRowAllowance = .standard) -> String {
        "tv writes a connection's first \(ByteWords.grouped(Int64(allowance.first))) requests, then \(allowance.perSecond) a second"
            + " (far more than a browser makes; a flood such as HTTP/2's rapid reset is held to that), and follows at most"
            + " \(RequestRowAllowance.streamsFollowed) of its HTTP/2 streams at once (a stream opened while that many wait for their responses is counted)"
    }

    /// "flow 12 (5,000)", "flows 12 (5,000), 15 (3) and 2 more".
    private var named: String {
        let shown = flows.prefix(Self.namedCap).map { "\($0.label) (\(ByteWords.grouped($0.count)))" }
        var list = shown.count == 1 ? shown[0] : shown.dropLast().joined(separator: ", ") + (flows.count > Self.namedCap ? ", " : " and ") + shown.last!
        if flows.count > Self.namedCap { list += " and \(flows.count - Self.namedCap) more" }
        return (flows.count == 1 ? "flow " : "flows ") + list
    }

    private var total: Int64 { flows.reduce(0) { $0 &+ $1.count } }

    /// The list's note, one sentence ("Flow 12 had 5,000 requests read and counted without
    /// rows: tv writes …; `tv flow 12` says how many have rows."); nil when no flow shown had
    /// requests left out.
    public var sentence: String? {
        guard !flows.isEmpty else { return nil }
        let count = total
        let command = (flows.count == 1 ? "tv flow \(flows[0].label)" : "tv flow ID") + (shared ? " --store URL" : "")
        return (flows.count == 1 ? "Flow \(flows[0].label)" : "Flows " + named.dropFirst("flows ".count))
            + " had \(ByteWords.grouped(count)) request\(count == 1 ? "" : "s") read and counted without rows: "
            + Self.bounds() + "; `\(command)` says how many have rows."
    }

    /// `requestsLeftOut` in --json: `[{"flow": 12, "count": 5000}, …]` (with `instance` from
    /// the shared store, as its rows carry it), empty when none.
    public var json: JSONValue {
        .array(flows.map { .object([("flow", .int($0.flow)), ("count", .int($0.count))] + SharedInstancePresentation.jsonField($0.instance)) })
    }

    /// A part of the HAR log's comment: "flow 12 had 5,000 requests read and counted without
    /// rows, so no entry here holds them unless its kept content does: tv writes …"; nil when none.
    public var harNote: String? {
        guard !flows.isEmpty else { return nil }
        let count = total
        return "\(named) had \(ByteWords.grouped(count)) request\(count == 1 ? "" : "s") read and counted without rows, so no entry here holds "
            + (count == 1 ? "it" : "them") + " unless kept content does: " + Self.bounds()
    }
}

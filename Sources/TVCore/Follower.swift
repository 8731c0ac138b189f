import FlowStore
import FlowTerms
import TVHome

/// A row `Follower` can follow: an id, when it started, and whether it is over.
public protocol FollowedRow: Sendable, Equatable {
    var followID: Int64 { get }
    /// When it started (µs): the keyset the reads go by.
    var followStart: Int64 { get }
    var isFinished: Bool { get }
    /// Whether the row says enough to be told as new: a flow whose destination is not read yet
    /// (an explicit proxy's connection before its CONNECT) waits for the next poll.
    var isReadyToTell: Bool { get }
}

extension FlowRecord: FollowedRow {
    public var followID: Int64 { id }
    public var followStart: Int64 { startTime }
    public var isFinished: Bool { duration != nil }
    public var isReadyToTell: Bool { isFinished || host != nil || serverPort != 0 }
}

extension ExchangeRecord: FollowedRow {
    public var followID: Int64 { id }
    public var followStart: Int64 { requestTime }
    public var isFinished: Bool { state != .open }
    public var isReadyToTell: Bool { true }
}

/// `tv flows --follow`'s follower of flows.
public typealias FlowFollower = Follower<FlowRecord>
/// `tv flows --follow --requests`' follower of exchanges (only their finishes are printed).
public typealias ExchangeFollower = Follower<ExchangeRecord>

/// `tv flows --follow`'s memory between two polls: which rows (flows, or exchanges with
/// `--requests`) were already told as new, which are still open (to tell when they finish), and
/// from when to ask again. Pure: rows in, events
/// out; the command does the reading.
///
/// Why polling the database and not a push over the control socket: the rows are the truth
/// every reader shares (flows of a `tv exec` writing the same database are followed too, and a
/// follower can never slow the session: the control socket answers one request at a time, and a
/// subscriber that stops reading would hold a push), and a keyset read over the start-time index
/// costs a few rows per poll. The keyset is on start time, not id, because a `tv exec` reserves
/// blocks of ids ahead of the session, so ids are not in the order rows appear. Flows are
/// written when they open, within a writer batch; a row appearing more than `lagMicros` after
/// its start is missed (its writer was failing), which the session's own losses say.
public struct Follower<Row: FollowedRow>: Sendable {
    /// One thing to print.
    public enum Event: Sendable, Equatable {
        /// A row opened (or was first seen already finished: `opened` then `finished`).
        case opened(Row)
        case finished(Row)
    }

    /// How far behind the newest start seen the next read begins (µs): rows written late.
    public static var lagMicros: Int64 { 5_000_000 }
    /// How many open flows are watched for their end; past it the oldest are forgotten.
    public static var openLimit: Int { 20_000 }

    /// The next read asks for flows started at or after this (µs).
    public private(set) var since: Int64
    /// Flows told as new, by id → start time (pruned once older than `since`).
    private var told: [Int64: Int64] = [:]
    /// Flows told as new and not yet finished, by id → start time.
    public private(set) var open: [Int64: Int64] = [:]

    /// Starts following flows that start at or after `startMicros`.
    public init(startMicros: Int64) { since = startMicros }

    /// Watches flows that were open before following began (`rows` without a duration), so their
    /// end is told; nothing is printed for them now.
    public mutating func watch(_ rows: [Row]) {
        for row in rows where !row.isFinished && open.count < Follower.openLimit {
            open[row.followID] = row.followStart
            told[row.followID] = row.followStart
        }
    }

    /// What the two reads returned: `started` (flows started at or after `since`, oldest first)
    /// and `rechecked` (the current rows of `open`'s ids). Returns the events in order: finishes
    /// of flows already open first, then each new flow (and its finish when it is already over).
    /// `full`: the read of started flows hit its limit, so the next begins at the last row's start
    /// (without the lag, or a window fuller than the limit would be read forever).
    public mutating func take(started: [Row], rechecked: [Row], full: Bool = false) -> [Event] {
        var events: [Event] = []
        for row in rechecked.sorted(by: { ($0.followStart, $0.followID) < ($1.followStart, $1.followID) })
        where open[row.followID] != nil && row.isFinished {
            open[row.followID] = nil
            events.append(.finished(row))
        }
        var newest = since
        // The oldest row left for the next poll: the window never moves past it.
        var waiting: Int64?
        for row in started where told[row.followID] == nil {
            guard row.isReadyToTell else {
                waiting = min(waiting ?? row.followStart, row.followStart)
                continue
            }
            told[row.followID] = row.followStart
            events.append(.opened(row))
            if row.isFinished {
                events.append(.finished(row))
            } else {
                open[row.followID] = row.followStart
            }
            newest = max(newest, row.followStart)
        }
        let next = full ? newest : newest - Follower.lagMicros
        since = max(since, waiting.map { min(next, $0) } ?? next)
        told = told.filter { $0.value >= since || open[$0.key] != nil }
        if open.count > Follower.openLimit {
            for (id, _) in open.sorted(by: { $0.value < $1.value }).prefix(open.count - Follower.openLimit) { open[id] = nil }
        }
        return events
    }
}

extension Follower.Event where Row == FlowRecord {
    /// One line: `+` for opened, `-` for finished; the id, the time (UTC), the program when
    /// known (`tv flows`' PROGRAM word; it was left out: a trial), the host, the protocol and
    /// port; a finished flow adds its bytes, duration and status word.
    /// `+ 12 14:05:03 curl example.com h2 :443`
    /// `- 12 14:05:04 curl example.com h2 :443 ↑ 1.2 KiB ↓ 30 KiB 0.8 s inspected`
    public var line: String {
        func program(_ f: FlowRecord) -> String {
            let word = FlowProgramPresentation.word(f.program)
            return word.isEmpty ? "" : word + " "
        }
        switch self {
        case .opened(let f):
            return "+ \(f.id) \(Units.utc(f.startTime / 1_000_000, format: "%H:%M:%S")) \(program(f))\(TerminalText.line(f.host ?? f.serverAddress)) \(FlowListPresentation.protocolAndPort(f))"
        case .finished(let f):
            let end = f.startTime + (f.duration ?? 0)
            var out = "- \(f.id) \(Units.utc(end / 1_000_000, format: "%H:%M:%S")) \(program(f))\(TerminalText.line(f.host ?? f.serverAddress)) \(FlowListPresentation.protocolAndPort(f))"
            out += " ↑ \(Units.bytes(f.bytesUp)) ↓ \(Units.bytes(f.bytesDown)) \(Units.duration(microseconds: f.duration ?? 0))"
            let status = f.status == .encrypted && f.failureReason == nil ? "encrypted" : FlowListPresentation.statusWord(f)
            return out + " " + status
        }
    }

    /// One JSON line: `{"event": "opened"|"finished", "flow": {…as tv flow --json}}`.
    public var json: JSONValue {
        switch self {
        case .opened(let f): return .object([("event", .string("opened")), ("flow", FlowDetailPresentation.json(f))])
        case .finished(let f): return .object([("event", .string("finished")), ("flow", FlowDetailPresentation.json(f))])
        }
    }
}

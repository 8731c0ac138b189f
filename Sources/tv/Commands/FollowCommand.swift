import FlowFilter
import FlowStore
import Foundation
import Synchronization
import TVCore
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `tv flows --follow`: a live tail of flows as they open and finish, one line (or JSON line)
/// per event, until Ctrl-C or until the session stops. It polls the database (see
/// `FlowFollower` for why not a push over the control socket), asking the session to write what
/// it holds first so a poll sees flows within a writer batch.
enum FollowCommand {
    /// Time between two polls.
    static let pollMillis: UInt32 = 500

    /// - Parameter filter: `--filter`'s expression: only the rows it matches are told.
    static func run(_ inv: Invocation, query: FlowQuery, requests: Bool, filter: FilterExpression? = nil) throws -> Int32 {
        let home = try inv.existingHome()
        guard LiveSessionFlush.ask(home) != .noSession else {
            throw UsageRefusal("No tv session is running for this data folder, so there is nothing to follow; start one with `tv run`.", exitCode: 3)
        }
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        let stop = Atomic<Int32>(0)
        Terminal.unblock([SIGINT, SIGTERM])
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { stop.store(sig, ordering: .relaxed) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }

        let now = FlowCommands.nowMicros()
        let limit = 5_000
        let matcher = filter.map { FollowFilter($0, store: store) }
        // Rows open now (started within the last day) are watched so their end is told.
        let watchedSince = now - 86_400_000_000
        let poll: () throws -> [String]
        if requests {
            var follower = ExchangeFollower(startMicros: now)
            follower.watch(try store.exchanges(matching: query, requestedSince: watchedSince, limit: ExchangeFollower.openLimit))
            if !inv.json { inv.console.note("Following finished requests; Ctrl-C stops.") }
            poll = {
                let started = try store.exchanges(matching: query, requestedSince: follower.since, limit: limit)
                let rechecked = try store.exchanges(ids: Array(follower.open.keys))
                return follower.take(started: started, rechecked: rechecked, full: started.count == limit).compactMap { event in
                    guard case .finished(let e) = event, matcher?.matches(e) ?? true else { return nil }
                    return inv.json ? RequestListPresentation.json(e).serialized(pretty: false) : RequestListPresentation.logLine(e)
                }
            }
        } else {
            var follower = FlowFollower(startMicros: now)
            follower.watch(try store.flows(matching: query, startedSince: watchedSince, limit: FlowFollower.openLimit))
            if !inv.json { inv.console.note("Following new and finished flows (+ opened, - finished); Ctrl-C stops.") }
            poll = {
                let started = try store.flows(matching: query, startedSince: follower.since, limit: limit)
                let rechecked = try store.flows(ids: Array(follower.open.keys))
                return follower.take(started: started, rechecked: rechecked, full: started.count == limit).compactMap { event in
                    let row: FlowRecord
                    switch event { case .opened(let r), .finished(let r): row = r }
                    guard matcher?.matches(row) ?? true else { return nil }
                    return inv.json ? event.json.serialized(pretty: false) : event.line
                }
            }
        }
        while true {
            let session = LiveSessionFlush.ask(home)
            for line in try poll() { inv.console.line(line) }
            if session == .noSession {
                inv.console.note("The session stopped, so following ends.")
                return 0
            }
            for _ in 0..<(pollMillis / 50) {
                switch stop.load(ordering: .relaxed) {
                case 0: usleep(50_000); continue
                case SIGTERM: inv.console.note("Stopped following (terminated).")
                default: inv.console.note("Stopped following (Ctrl-C).")
                }
                return 0
            }
        }
    }
}

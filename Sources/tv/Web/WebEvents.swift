import FlowStore
import Foundation
import Synchronization
import TVCore
import TVHome
import Web
#if canImport(Glibc)
import Glibc
#endif

/// `GET /api/events`: Server-Sent Events (WHATWG HTML §9.2) for the open pages.
///
/// - `event: flow`, one per flow opened or finished: the line `tv flows --follow --json` prints
///   (`FlowFollower`, the same reads as `FollowCommand`, every `pollMillis`).
/// - `event: top`, whenever `DashboardSampler` has new figures (every 3 s, sampled on its own
///   thread, so a flow event never waits for one): the shape `GET /api/top` answers (`tv top
///   --once --json`: the session's liveness, rates, totals, talkers), for the Dashboard.
/// - a comment line when nothing was sent for `keepAliveSeconds`, so a client that went away
///   is noticed and libmicrohttpd never closes the stream as idle (`WebServer.idleTimeoutSeconds`,
///   three times as long). Counted in seconds, not polls: a poll's reads take their own time,
///   and 30 polls outlasted a 20 s timeout under load (the browser test caught it).
enum WebEvents {
    static let pollMillis: UInt32 = 500
    static let keepAliveSeconds: Double = 10
    /// Set when `tv web` stops: every stream ends at its next poll.
    static let stopping = Atomic<Bool>(false)

    static func response(home: TVHome, api: WebAPI) -> WebResponse {
        WebResponse(status: 200, contentType: "text/event-stream; charset=utf-8", body: [],
                    headers: [("X-Accel-Buffering", "no")], stream: FlowEventStream(home: home, api: api))
    }
}

/// One page's event stream.
///
/// `@unchecked Sendable`: libmicrohttpd calls `next` only from the one thread that serves this
/// connection, one call at a time, and nothing else touches the stream's state after it is made.
final class FlowEventStream: WebStream, @unchecked Sendable {
    let home: TVHome
    let api: WebAPI
    private var store: FlowStore?
    private var follower = FlowFollower(startMicros: FlowCommands.nowMicros())
    private var started = false
    /// When the stream last sent anything.
    private var lastSent = Date()
    /// The dashboard figures' generation last sent.
    private var toldGeneration = 0

    init(home: TVHome, api: WebAPI) {
        self.home = home
        self.api = api
    }

    deinit { store?.close() }

    func next() -> [UInt8]? {
        if !started {
            started = true
            // Open flows are watched so their end is told (as `tv flows --follow`).
            if let store = openStore() {
                let since = FlowCommands.nowMicros() - 86_400_000_000
                follower.watch((try? store.flows(matching: FlowQuery(), startedSince: since, limit: FlowFollower.openLimit)) ?? [])
            }
            return Array("retry: 2000\n\n".utf8) + top()
        }
        while true {
            usleep(WebEvents.pollMillis * 1_000)
            if WebEvents.stopping.load(ordering: .relaxed) { return nil }
            var out: [UInt8] = []
            if let store = openStore() {
                _ = LiveSessionFlush.ask(home)
                let limit = 5_000
                if let fresh = try? store.flows(matching: FlowQuery(), startedSince: follower.since, limit: limit),
                   let rechecked = try? store.flows(ids: Array(follower.open.keys)) {
                    for event in follower.take(started: fresh, rechecked: rechecked, full: fresh.count == limit) {
                        out += Array("event: flow\ndata: \(event.json.serialized())\n\n".utf8)
                    }
                }
            }
            out += top()
            let now = Date()
            if out.isEmpty && now.timeIntervalSince(lastSent) >= WebEvents.keepAliveSeconds { out = Array(": still here\n\n".utf8) }
            if !out.isEmpty {
                lastSent = now
                return out
            }
        }
    }

    /// The Dashboard's newest figures as one `top` event, when there are figures not yet sent.
    private func top() -> [UInt8] {
        let figures = api.dashboard.latest()
        guard figures.generation > toldGeneration else { return [] }
        toldGeneration = figures.generation
        return Array("event: top\ndata: \(figures.json)\n\n".utf8)
    }

    /// The store, opened once it exists (a data folder with no session yet has none).
    private func openStore() -> FlowStore? {
        if store == nil { store = try? FlowStore(readingHome: home) }
        return store
    }
}

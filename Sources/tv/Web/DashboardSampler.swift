import Foundation
import Synchronization
import TVCore
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The Dashboard's figures for `tv web`'s event streams, sampled on a thread of their own every
/// `interval`: `tv top`'s `Sampler` (the session's counters over the control socket, the newest
/// flows, the talkers), with the rates taken between two consecutive samples (`interval` apart),
/// so no sample waits a second for its second reading and no stream waits for a sample. Streams
/// read the newest figures (`latest`) at their own pace; a flow event is never held behind one.
///
/// The thread starts with the first stream that asks and samples only while some stream asked
/// in the last `idleAfter`; it ends when `tv web` stops (`WebEvents.stopping`).
final class DashboardSampler: Sendable {
    /// How often the figures are sampled (the rates' interval).
    static let interval: Duration = .seconds(3)
    /// No stream asked for this long: the thread stops sampling (and the next ask starts it again).
    static let idleAfter: Duration = .seconds(10)

    /// The newest figures: `tv top --once --json`'s object on one line, and its number (each
    /// sample's one higher; 0 before the first).
    struct Figures: Sendable, Equatable {
        var generation: Int
        var json: String
    }

    private struct State {
        var figures = Figures(generation: 0, json: "")
        var running = false
        var lastAsked = ContinuousClock.now
    }

    let home: TVHome
    private let state = Mutex(State())

    init(home: TVHome) { self.home = home }

    /// The newest figures (generation 0 and no JSON before the first sample); starts the
    /// sampling thread when it is not running.
    func latest() -> Figures {
        let start = state.withLock { s -> Bool in
            s.lastAsked = .now
            if s.running { return false }
            s.running = true
            return true
        }
        if start {
            let thread = Thread { [self] in sampleUntilIdle() }
            thread.name = "tv-web-dashboard"
            thread.start()
        }
        return state.withLock { $0.figures }
    }

    private func sampleUntilIdle() {
        var sampler = TopCommand.Sampler(home: home)
        let clock = ContinuousClock()
        while !WebEvents.stopping.load(ordering: .relaxed) {
            let began = clock.now
            sampler.sample()
            let json = sampler.screen(sort: .bytes, paused: false).json.serialized()
            let idle = state.withLock { s -> Bool in
                s.figures = Figures(generation: s.figures.generation + 1, json: json)
                if clock.now - s.lastAsked > Self.idleAfter {
                    s.running = false
                    return true
                }
                return false
            }
            if idle { return }
            // The next sample `interval` after this one began, in short naps so a stop is quick.
            while clock.now - began < Self.interval, !WebEvents.stopping.load(ordering: .relaxed) {
                usleep(100_000)
            }
        }
        state.withLock { $0.running = false }
    }
}

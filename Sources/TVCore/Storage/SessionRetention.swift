#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Recording
import Settings
import TVHome

/// The retention passes of a running session: one at start, one every `interval` seconds, and
/// one whenever a limit is saved (the control socket's `setting-saved`). Each runs on this
/// object's own serial queue over its own connections (never on a worker loop: the data path
/// never waits on it). A pass that deleted nothing says nothing; one that deleted something
/// says what, through `say`.
///
/// `@unchecked Sendable`: its stored properties are constants; `timer` is a DispatchSource,
/// whose schedule/resume/cancel are thread-safe, and every pass runs on `queue` (serial), so the
/// `StorageManager` (not Sendable) is only ever touched from that queue.
public final class SessionRetention: @unchecked Sendable {
    /// The interval between periodic passes: ten minutes.
    public static let defaultInterval: Double = 600

    private let home: TVHome
    private let settings: SettingsStore
    private let say: @Sendable (String) -> Void
    private let queue = DispatchQueue(label: "tv.retention")
    private let timer: DispatchSourceTimer

    /// The capture file being recorded is found as every pass finds it: the one its writer holds
    /// locked (`CaptureFolder.isRecording`).
    public init(home: TVHome, settings: SettingsStore, interval: Double = SessionRetention.defaultInterval,
                say: @escaping @Sendable (String) -> Void) {
        self.home = home
        self.settings = settings
        self.say = say
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [self] in self.pass() }
    }

    /// Runs the pass at start, then starts the periodic ones. `afterFirstPass` runs on the pass
    /// queue once the first pass is done (the session's start-up work ends there).
    public func start(afterFirstPass: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in
            self.pass()
            afterFirstPass()
        }
        timer.resume()
    }

    /// A limit was saved: a pass now (after any pass already running).
    public func limitsChanged() {
        queue.async { [self] in self.pass() }
    }

    /// Waits for a pass in progress, then stops the periodic ones.
    public func stop() {
        timer.cancel()
        queue.sync {}
    }

    /// One more pass, waited for: at the end of a session whose captures grew since its last
    /// (the folder stayed over its limit until the next session: a trial). After `stop()`.
    public func finalPass() {
        queue.sync { self.pass() }
    }

    /// One automatic pass: silent when nothing went; failures said once each time.
    private func pass() {
        do {
            let limits = try StorageLimitsReading.limits(try settings.read())
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let report = try manager.applyLimits(limits, recording: nil, now: StorageClock.now())
            for line in StoragePresentation.report(report, automatic: true) { say(line) }
        } catch let error as UserFacingError {
            say("Retention did not run: " + error.message)
        } catch {
            say("Retention did not run: \(error)")
        }
    }
}

/// The wall clock retention reads, in µs since the epoch.
enum StorageClock {
    static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
    }
}

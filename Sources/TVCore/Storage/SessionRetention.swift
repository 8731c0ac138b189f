#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import Recording
import Settings
import TVHome

/// The retention passes of a running session: one at start, one every `interval` seconds, and
/// one whenever a limit is saved (the control socket's `setting-saved`). Each runs on this
/// object's own serial queue over its own connections (never on a worker loop: the data path
/// never waits on it). A pass that deleted nothing says nothing; one that deleted something
/// says what, through `say`.
///
/// What automatic passes (periodic, after a capture's rotation) delete is said at most every 10 s
/// (`RetentionAnnouncement`); a pass for a limit the user saved says its own at once.
///
/// `@unchecked Sendable`: its stored properties are constants but `pacing` and `flushScheduled`;
/// `timer` is a DispatchSource, whose schedule/resume/cancel are thread-safe, and every pass
/// runs on `queue` (serial), so the `StorageManager` (not Sendable) and the two variables are
/// only ever touched from that queue.
public final class SessionRetention: @unchecked Sendable {
    /// The interval between periodic passes: ten minutes.
    public static let defaultInterval: Double = 600

    private let home: TVHome
    private let settings: SettingsStore
    private let say: @Sendable (String) -> Void
    private let announces: Bool
    private let queue = DispatchQueue(label: "tv.retention")
    /// Where each pass publishes the audit evidence it found, carried flows included, for the
    /// content writer's sweeps (nil: nowhere).
    private let carried: CarriedEvidence?
    private let timer: DispatchSourceTimer
    /// When automatic passes' deletions are said (touched on `queue` only).
    private var pacing = RetentionAnnouncement()
    /// A flush of what `pacing` holds is queued (touched on `queue` only).
    private var flushScheduled = false

    /// The capture file being recorded is found as every pass finds it: the one its writer holds
    /// locked (`CaptureFolder.isRecording`).
    /// - Parameter announces: whether what a pass deletes is said (off with `--quiet`: a quiet
    ///   session printed a line per capture file deleted, a trial); a pass that fails is always.
    /// - Parameter carried: where each pass publishes the flows carried into audit sessions.
    public init(home: TVHome, settings: SettingsStore, interval: Double = SessionRetention.defaultInterval,
                announces: Bool = true, carried: CarriedEvidence? = nil, say: @escaping @Sendable (String) -> Void) {
        self.home = home
        self.carried = carried
        self.settings = settings
        self.say = say
        self.announces = announces
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [self] in _ = self.pass(paced: true) }
    }

    /// Runs the pass at start, then starts the periodic ones. `afterFirstPass` runs on the pass
    /// queue once the first pass is done (the session's start-up work ends there).
    public func start(afterFirstPass: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in
            _ = self.pass()
            afterFirstPass()
        }
        timer.resume()
    }

    /// A limit was saved: a pass now (after any pass already running).
    /// Also after a capture file's rotation: what it deletes is said at most every 10 s.
    public func limitsChanged() {
        queue.async { [self] in _ = self.pass(paced: true) }
    }

    /// How long `setting-saved` waits for a limit's pass before it answers (s): below the control
    /// client's 5 s wait for any answer.
    public static let answerWaitSeconds = 3.0
    /// The `setting-saved` answer's value holding the pass's sentences (one a line).
    public static let reportKey = "retention"

    /// What `limitsChanged(waitingUpTo:)` returned, as said: its sentences, or the one saying
    /// the pass goes on.
    public static func lines(_ said: [String]?) -> [String] {
        said ?? ["Its retention pass is still running; the session's own output says what it deletes."]
    }

    /// A limit was saved through `tv settings set` (the control socket's `setting-saved`): a pass
    /// now, waited for up to `seconds`, so the command can print what went as it does with no
    /// session running (a trial's `tv settings set history.maxAge 1h --yes` printed no count).
    /// - Returns: the pass's sentences (empty when nothing went, as without a session), or nil
    ///   when it was still running at the deadline (it goes on; the session says what it deletes).
    public func limitsChanged(waitingUpTo seconds: Double) -> [String]? {
        let done = DispatchSemaphore(value: 0)
        let said = Mutex<[String]>([])
        queue.async { [self] in
            let lines = self.pass()
            said.withLock { $0 = lines }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return said.withLock { $0 }
    }

    /// Waits for a pass in progress, then stops the periodic ones.
    public func stop() {
        timer.cancel()
        queue.sync { self.sayHeld() }
    }

    /// One more pass, waited for: at the end of a session whose captures grew since its last
    /// (the folder stayed over its limit until the next session: a trial). After `stop()`.
    public func finalPass() {
        queue.sync {
            _ = self.pass()
            self.sayHeld()
        }
    }

    /// Says what `pacing` holds, whatever the time (on `queue`).
    private func sayHeld() {
        guard announces, let held = pacing.flush() else { return }
        for line in StoragePresentation.report(held, automatic: true) { say(line) }
    }

    /// Says what `pacing` holds once its gap has passed (on `queue`).
    private func sayDue() {
        flushScheduled = false
        guard let due = pacing.due(atNanos: DispatchTime.now().uptimeNanoseconds) else { return }
        for line in StoragePresentation.report(due, automatic: true) { say(line) }
    }

    /// One automatic pass: silent when nothing went; failures said once each time.
    /// - Parameter paced: what it deleted is said as `pacing` allows (else at once, with
    ///   anything held).
    /// - Returns: the sentences of what this pass deleted (said now or later).
    private func pass(paced: Bool = false) -> [String] {
        var lines: [String]
        var failed = false
        do {
            let limits = try StorageLimitsReading.limits(try settings.read())
            let now = StorageClock.now()
            let manager = try StorageManager.opening(home: home, limits: limits, now: now)
            defer { manager.close() }
            let evidence = try manager.auditEvidence()
            carried?.update(evidence)
            let report = try manager.applyLimits(limits, evidence: evidence, recording: nil, now: now)
            lines = StoragePresentation.report(report, automatic: true)
            if paced && announces {
                switch pacing.passed(report, atNanos: DispatchTime.now().uptimeNanoseconds) {
                case .say(let total):
                    for line in StoragePresentation.report(total, automatic: true) { say(line) }
                case .hold(let until):
                    if !flushScheduled {
                        flushScheduled = true
                        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: until)) { [self] in self.sayDue() }
                    }
                case .nothing:
                    break
                }
                return lines
            }
        } catch let error as UserFacingError {
            // A full disk's way on follows what the folder holds (`DataFolderHoldings`).
            let message = (error as? DataFolderFullSaying)?.fullDiskMessage(wayOn: DataFolderHoldings.wayOn(home: home)) ?? error.message
            lines = ["Retention did not run: " + message]
            failed = true
        } catch {
            lines = ["Retention did not run: \(error)"]
            failed = true
        }
        if announces || failed {
            if let held = pacing.flush(), !failed { for line in StoragePresentation.report(held, automatic: true) { say(line) } }
            for line in lines { say(line) }
        }
        return lines
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

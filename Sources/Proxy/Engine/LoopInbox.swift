import CTVShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The thread-safe door into an `EpollLoop`: other threads (the server, resolver threads, the
/// thread that stops a TUN engine) post jobs that the loop's thread runs with its `Target` (the
/// per-thread state the jobs need: the proxy's `EventLoop`, the tunnel's engine). One eventfd
/// wakes the loop; a burst of posts before the loop wakes writes it once.
public final class LoopInbox<Target: AnyObject>: Sendable {
    /// A job, run on the loop's thread with the loop's target.
    public typealias Job = @Sendable (Target) -> Void
    /// The eventfd the loop watches (negative when it could not be made: check before use).
    public let wakeFD: Int32
    /// The errno of the eventfd(2) that failed (0 when `wakeFD` was made).
    public let wakeErrno: Int32
    private struct State {
        var jobs: [Job] = []
        var signalled = false
    }
    private let state = Mutex(State())

    public init() {
        let fd = tv_eventfd()
        wakeFD = fd
        wakeErrno = fd < 0 ? errno : 0
    }

    deinit { if wakeFD >= 0 { close(wakeFD) } }

    /// Queues `job` and wakes the loop (once per batch).
    public func post(_ job: @escaping Job) {
        let signal = state.withLock { s -> Bool in
            s.jobs.append(job)
            if s.signalled { return false }
            s.signalled = true
            return true
        }
        if signal {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    /// Takes every queued job (in posting order) and re-arms the wake-up.
    public func take() -> [Job] {
        var drained: UInt64 = 0
        _ = read(wakeFD, &drained, 8)
        return state.withLock { s in
            let jobs = s.jobs
            s.jobs = []
            s.signalled = false
            return jobs
        }
    }
}

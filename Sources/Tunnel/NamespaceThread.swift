import CTVShims
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// A dedicated thread that lives in its own new network (and optionally mount) namespace and runs
/// the jobs given to it: creating sockets that must belong to that namespace, configuring it,
/// spawning the command. Namespaces are per thread on Linux (`unshare`/`setns` change only the
/// calling thread, and children inherit the calling thread's), so this work must never run on a
/// Swift concurrency executor, whose tasks may resume on another thread (swift-linux.md).
///
/// The namespace lives while anything references it: this thread, a TUN opened inside it, a
/// socket created here, a process spawned here. `stop()` ends the thread.
public final class NamespaceThread: Sendable {
    private struct Job: @unchecked Sendable {
        // `@unchecked Sendable`: `work` is only called on the namespace thread, once; the caller
        // waits on `done` and reads the result only after that.
        let work: () -> Void
        let done: DispatchSemaphore
    }

    /// What the thread and its callers share, by reference.
    private final class Shared: Sendable {
        let jobs = Mutex<[Job]>([])
        let wake = DispatchSemaphore(value: 0)
        let stopped = Mutex(false)
        let finished = DispatchSemaphore(value: 0)
    }

    private let shared = Shared()
    /// The namespace's identity (the inode of /proc/thread-self/ns/net).
    public let networkNamespaceInode: UInt64

    /// Starts the thread and has it `unshare` the namespaces in `flags` (`tv_CLONE_NEWNET`,
    /// optionally `| tv_CLONE_NEWNS`; a new mount namespace also has its mounts made private).
    /// - Throws: `TunnelError.namespace` when unsharing fails (no CAP_SYS_ADMIN).
    public init(name: String, newMountNamespace: Bool) throws {
        let started = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<UInt64, TunnelError>?>(nil)
        let shared = self.shared
        let thread = Thread {
            let wake = shared.wake, finished = shared.finished
            var flags = tv_CLONE_NEWNET
            if newMountNamespace { flags |= tv_CLONE_NEWNS }
            let rc = tv_unshare(flags)
            if rc != 0 {
                outcome.withLock { $0 = .failure(.namespace(step: "create a network namespace", reason: Errno(-rc).phrase)) }
                started.signal()
                finished.signal()
                return
            }
            if newMountNamespace {
                let mrc = tv_mount_make_private()
                if mrc != 0 {
                    outcome.withLock { $0 = .failure(.namespace(step: "make the mount namespace private", reason: Errno(-mrc).phrase)) }
                    started.signal()
                    finished.signal()
                    return
                }
            }
            var info = stat()
            let inode: UInt64 = stat("/proc/thread-self/ns/net", &info) == 0 ? UInt64(info.st_ino) : 0
            outcome.withLock { $0 = .success(inode) }
            started.signal()
            while true {
                wake.wait()
                let batch = shared.jobs.withLock { list -> [Job] in
                    let out = list
                    list.removeAll()
                    return out
                }
                for job in batch {
                    job.work()
                    job.done.signal()
                }
                if shared.stopped.withLock({ $0 }) && shared.jobs.withLock({ $0.isEmpty }) { break }
            }
            finished.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
        started.wait()
        switch outcome.withLock({ $0 })! {
        case .success(let inode): networkNamespaceInode = inode
        case .failure(let error):
            shared.stopped.withLock { $0 = true }
            throw error
        }
    }

    /// Runs `body` on the namespace thread and returns its result (the caller waits).
    public func run<T>(_ body: @escaping () throws -> T) throws -> T {
        guard !shared.stopped.withLock({ $0 }) else { throw TunnelError.namespace(step: "use the namespace", reason: "it was torn down") }
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        shared.jobs.withLock { $0.append(Job(work: { box.result = Result { try body() } }, done: done)) }
        shared.wake.signal()
        done.wait()
        return try box.result!.get()
    }

    /// Ends the thread after the jobs already given; waits for it. Safe to call twice.
    public func stop() {
        let already = shared.stopped.withLock { s -> Bool in
            let was = s
            s = true
            return was
        }
        guard !already else { return }
        shared.wake.signal()
        shared.finished.wait()
    }

    deinit { stop() }
}

/// A job's result on its way back from the namespace thread.
/// `@unchecked Sendable`: written once on the namespace thread before the job's semaphore is
/// signalled, read once by the waiting caller after it; the semaphore orders the two.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}

import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The capture files' fdatasync(2)s, run off the writer thread, in order: a disk slower than
/// the packets for a while (a sync waits for every dirty page of a file, and a bulk transfer
/// fills a 64 MB file in a fraction of a second) would otherwise stall the writer while its
/// queue fills and drops. The writer hands over a closed file's descriptor (synced, then
/// closed) and asks for periodic syncs of the open one (on a dup(2) of its descriptor; skipped
/// while the last periodic one still runs); `finish` waits for all of them (the writer's stop).
final class BackgroundSync: Sendable {
    private let queue = DispatchQueue(label: "tv capture sync", qos: .utility)
    private let periodicRunning = Atomic<Bool>(false)

    /// Starts an fdatasync of `fd`'s file; false (nothing started) while the last one still runs
    /// or when the descriptor cannot be duplicated.
    func sync(_ fd: Int32) -> Bool {
        guard periodicRunning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return false }
        let copy = dup(fd)
        guard copy >= 0 else {
            periodicRunning.store(false, ordering: .releasing)
            return false
        }
        queue.async {
            _ = fdatasync(copy)
            close(copy)
            self.periodicRunning.store(false, ordering: .releasing)
        }
        return true
    }

    /// Takes `fd`, a closed capture file's descriptor: synced, then closed.
    func syncAndClose(_ fd: Int32) {
        queue.async {
            _ = fdatasync(fd)
            close(fd)
        }
    }

    /// Waits until every sync handed over so far is done.
    func finish() { queue.sync {} }
}

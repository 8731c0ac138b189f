#if canImport(Glibc)
import Glibc
#endif

/// Where a socket's file is open: process `pid`, descriptor `fd`.
public struct SocketHolder: Sendable, Equatable {
    public var pid: Int32
    public var fd: Int32
    public init(pid: Int32, fd: Int32) {
        self.pid = pid
        self.fd = fd
    }
}

/// The map from socket inode to the process holding it, built by reading `/proc/PID/fd/*` links
/// and kept as a cache: a hit is checked again (the one link re-read) before it is used; a miss
/// reads the recent owners' descriptors, then (once per batch of lookups) the processes' newest
/// first until every socket wanted is found. Used on the lookup thread only.
final class SocketOwners {
    /// inode → a holder found (a socket shared after fork is named after the newest process
    /// that holds it, the one read first). Entries are checked before use (`holder(of:)`).
    private(set) var holders: [UInt64: SocketHolder] = [:]
    /// Processes whose descriptors the last scan could not read (EACCES: another user's, when tv
    /// is not root); a scan that stopped early counts only those it met.
    private(set) var unreadable = 0
    /// Full scans done (for the counters).
    private(set) var scans: UInt64 = 0
    /// The processes that held the last sockets named, most recent first (at most
    /// `recentLimit`): a program that opens many connections (a browser) is found by reading its
    /// descriptors alone, before any full scan.
    private(set) var recent: [Int32] = []
    static let recentLimit = 16
    /// The map is emptied past this many entries (a bound between full scans).
    static let mapLimit = 200_000

    /// Notes that `pid` held a socket just named.
    func noteRecent(_ pid: Int32) {
        recent.removeAll { $0 == pid }
        recent.insert(pid, at: 0)
        if recent.count > Self.recentLimit { recent.removeLast() }
    }

    /// Reads the descriptors of the recent processes again, adding what they hold to the map,
    /// until every inode in `wanted` is found (the rest are not read).
    /// - Returns: the inodes of `wanted` still not found.
    func scanRecent(wanted: Set<UInt64>) -> Set<UInt64> {
        if holders.count > Self.mapLimit { holders.removeAll() }
        var left = wanted
        for pid in recent where !left.isEmpty {
            for (fd, inode) in ProcFiles.socketDescriptors(pid: pid, stoppingOnceFound: left).sockets where holders[inode] == nil {
                holders[inode] = SocketHolder(pid: pid, fd: fd)
                left.remove(inode)
            }
        }
        return left
    }

    /// The holder of `inode`, checked now: its link still names the socket. nil on a miss.
    func holder(of inode: UInt64) -> SocketHolder? {
        guard let h = holders[inode] else { return nil }
        if Self.holds(h, inode) { return h }
        holders[inode] = nil
        return nil
    }

    /// Whether `holder`'s descriptor still is socket `inode` (a link read now).
    static func holds(_ holder: SocketHolder, _ inode: UInt64) -> Bool {
        ProcFiles.socketInode(pid: holder.pid, fd: holder.fd) == inode
    }

    /// Reads the descriptors of the processes in network namespace `namespace` (the inode of
    /// its `/proc/PID/ns/net`; nil: every process), newest pid first, adding what they hold to
    /// the map, until every inode in `wanted` is found (a new connection's program is usually a
    /// new process, found first; the rest are not read). A process in another namespace costs
    /// one stat, not a read of all its descriptors.
    func rescan(namespace: UInt64?, wanted: Set<UInt64>) {
        scans += 1
        if holders.count > Self.mapLimit { holders.removeAll() }
        var left = wanted
        var denied = 0
        let pids = ProcFiles.entries("/proc").names.compactMap(ProcFiles.pid).sorted(by: >)
        for pid in pids where !left.isEmpty {
            if let namespace, ProcFiles.inode("/proc/\(pid)/ns/net").map({ $0 != namespace }) ?? false { continue }
            let (sockets, error) = ProcFiles.socketDescriptors(pid: pid, stoppingOnceFound: left)
            if error == EACCES { denied += 1 }
            for (fd, inode) in sockets {
                holders[inode] = SocketHolder(pid: pid, fd: fd)
                left.remove(inode)
            }
        }
        unreadable = denied
    }
}

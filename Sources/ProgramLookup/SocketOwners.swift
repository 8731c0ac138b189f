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

/// The map from socket inode to the process holding it, built by reading every
/// `/proc/PID/fd/*` link and kept as a cache: a hit is checked again (the one link re-read) before
/// it is used, a miss rebuilds the map once per batch of lookups. Used on the lookup thread only.
final class SocketOwners {
    /// inode → the first holder found (processes in ascending pid order, so a parent that shares
    /// a socket with its children is named).
    private(set) var holders: [UInt64: SocketHolder] = [:]
    /// Processes whose descriptors the last scan could not read (EACCES: another user's, when tv
    /// is not root).
    private(set) var unreadable = 0
    /// Full scans done (for the counters).
    private(set) var scans: UInt64 = 0

    /// The holder of `inode`, checked now: its link still names the socket. nil on a miss.
    func holder(of inode: UInt64) -> SocketHolder? {
        guard let h = holders[inode] else { return nil }
        if Self.holds(h, inode) { return h }
        holders[inode] = nil
        return nil
    }

    /// Whether `holder`'s descriptor still is socket `inode` (a link read now).
    static func holds(_ holder: SocketHolder, _ inode: UInt64) -> Bool {
        ProcFiles.readLink("/proc/\(holder.pid)/fd/\(holder.fd)").flatMap(ProcFiles.socketInode) == inode
    }

    /// Reads the descriptors of every process in network namespace `namespace` (the inode of
    /// its `/proc/PID/ns/net`; nil: every process) again and replaces the map. A process in
    /// another namespace costs one stat, not a read of all its descriptors.
    func rescan(namespace: UInt64?) {
        scans += 1
        var map: [UInt64: SocketHolder] = [:]
        var denied = 0
        let pids = ProcFiles.entries("/proc").names.compactMap(ProcFiles.pid).sorted()
        for pid in pids {
            if let namespace, ProcFiles.inode("/proc/\(pid)/ns/net").map({ $0 != namespace }) ?? false { continue }
            let fdDirectory = "/proc/\(pid)/fd"
            let (fds, error) = ProcFiles.entries(fdDirectory)
            if error == EACCES { denied += 1 }
            for name in fds {
                guard let fd = Int32(name), let link = ProcFiles.readLink("\(fdDirectory)/\(name)"),
                      let inode = ProcFiles.socketInode(link: link), map[inode] == nil else { continue }
                map[inode] = SocketHolder(pid: pid, fd: fd)
            }
        }
        holders = map
        unreadable = denied
    }
}

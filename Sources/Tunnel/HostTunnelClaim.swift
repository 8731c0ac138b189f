import Foundation
import Synchronization
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// One `tv run --mode tun` per network namespace. Every such session uses the same routing
/// table, rule priorities and mark (`HostRoutingPlan`), so a second one (another data folder)
/// took the first's routing without a word, and its stop removed the rules the first still
/// relied on: traffic then went out unseen while the first said it was running (a trial). The
/// claim is an exclusive `flock` on `/run/tunnelvision/host-tunnel-NETNS.lock` (NETNS: the
/// namespace's inode), held for the session's life and dropped by the kernel when its process
/// ends, however it ends; beside it, `host-tunnel-NETNS.json` (`Record`, 0600) says who holds
/// it and what it changed, so a session killed before it could undo its changes is told from a
/// live one and repaired by the next (its rules, and rp_filter, which it had loosened: after a
/// `kill -9` it stayed at 2 for good, as the next session saw 2 and left it).
public final class HostTunnelClaim: Sendable {
    /// What a holder changed, written once its routing is in place.
    public struct Record: Codable, Sendable, Equatable {
        public var pid: Int32
        public var dataFolder: String
        public var device: String
        public var table: UInt32
        public var mark: UInt32
        /// The rp_filter value to put back (`all`), when the holder changed it.
        public var rpFilterWas: String?
        /// Interfaces (and `default`) whose rp_filter the holder loosened from 1 to 2: the
        /// effective value is the larger of `all` and the interface's own (a trial's eth0 at 1
        /// with `all` at 0 dropped every IPv4 reply to tv's sockets). Absent in older records.
        public var rpFilterLoosened: [String]?

        public init(pid: Int32, dataFolder: String, device: String, table: UInt32, mark: UInt32, rpFilterWas: String?,
                    rpFilterLoosened: [String]? = nil) {
            self.pid = pid
            self.dataFolder = dataFolder
            self.device = device
            self.table = table
            self.mark = mark
            self.rpFilterWas = rpFilterWas
            self.rpFilterLoosened = rpFilterLoosened
        }
    }

    /// What to do with `net.ipv4.conf.all.rp_filter`: loosen it now (`set`), and the value to
    /// restore at exit. Strict (1) becomes loose (2) and 1 is restored; 2 left by a killed
    /// holder that found 1 (`left`) is kept for the session and 1 restored at its exit; any
    /// other value is the administrator's and is left alone. Pure.
    /// The interfaces (and `default`) of `values` (name → `net.ipv4.conf.NAME.rp_filter`) to
    /// loosen from strict (1) to loose (2), by name; `all`, loopback and the TUN itself are left
    /// alone. Pure.
    public static func interfacesToLoosen(_ values: [String: String], tun: String) -> [String] {
        values.filter { $0.value == "1" && !["all", "lo", tun].contains($0.key) }.map(\.key).sorted()
    }

    public static func rpFilterPlan(current: String?, left: Record?) -> (set: Bool, restore: String?) {
        if current == "1" { return (true, "1") }
        if current == "2", left?.rpFilterWas == "1" { return (false, "1") }
        return (false, nil)
    }

    /// The record a killed holder left (its changes are this claim's to undo); nil when the
    /// last holder cleaned up, or there was none.
    public let left: Record?
    private let fd: Int32
    private let recordPath: String
    private let released = Atomic<Bool>(false)

    public static let folder = "/run/tunnelvision"

    /// The lock and record paths of this thread's network namespace.
    static func paths() -> (lock: String, record: String) {
        var info = stat()
        let namespace = stat("/proc/self/ns/net", &info) == 0 ? String(info.st_ino) : "default"
        let base = folder + "/host-tunnel-" + namespace
        return (base + ".lock", base + ".json")
    }

    private init(fd: Int32, left: Record?, recordPath: String) {
        self.fd = fd
        self.left = left
        self.recordPath = recordPath
    }

    /// Takes the claim of this network namespace.
    /// - Throws: `TunnelError.hostTunnelInUse` when another live session holds it (naming it
    ///   from its record); `.configuration` when the lock cannot be made.
    public static func acquire() throws(TunnelError) -> HostTunnelClaim {
        let (lockPath, recordPath) = paths()
        mkdir(folder, 0o700)
        switch lock(lockPath, create: true) {
        case .taken(let fd): return HostTunnelClaim(fd: fd, left: readRecord(recordPath), recordPath: recordPath)
        case .held: throw inUse(recordPath)
        case .unavailable(let err):
            throw TunnelError.configuration(command: "open \(lockPath)", output: String(cString: strerror(err)))
        }
    }

    /// The refusal a `--mode tun` start would meet now (another live session holds the claim),
    /// asked before anything is made (a refused second session made its data folder and
    /// database first: a re-check); nil when the claim is free or cannot be asked.
    public static func refusalNow() -> TunnelError? {
        let (lockPath, recordPath) = paths()
        switch lock(lockPath, create: false) {
        case .taken(let fd):
            close(fd)
            return nil
        case .held: return inUse(recordPath)
        case .unavailable: return nil
        }
    }

    /// Takes the claim only when no session holds it and a killed one left a record: for the
    /// other modes and `tv exec`, which repair what it left (`left`) and release. Nil otherwise,
    /// and when the folder cannot be read (not root).
    public static func leftByKilledSession() -> HostTunnelClaim? {
        let (lockPath, recordPath) = paths()
        guard access(recordPath, F_OK) == 0, case .taken(let fd) = lock(lockPath, create: false) else { return nil }
        guard let left = readRecord(recordPath) else {
            close(fd)
            return nil
        }
        return HostTunnelClaim(fd: fd, left: left, recordPath: recordPath)
    }

    /// What a killed holder left in place now (its rule still here), without taking the claim:
    /// for `tv status` with no session running (a trial's download hung after a `kill -9` and
    /// status said nothing). Nil when a live session holds the claim, none was killed, or the
    /// folder cannot be read (not root).
    public static func leftNow() -> Record? {
        let (lockPath, recordPath) = paths()
        guard access(recordPath, F_OK) == 0, case .taken(let fd) = lock(lockPath, create: false) else { return nil }
        defer { close(fd) }
        guard let left = readRecord(recordPath), isHere(left) else { return nil }
        return left
    }

    /// What trying the lock file found: the lock taken (its descriptor, which holds it until
    /// closed), held by a live session, or the file not openable (its errno).
    private enum LockAttempt {
        case taken(Int32)
        case held
        case unavailable(Int32)
    }

    private static func lock(_ path: String, create: Bool) -> LockAttempt {
        let fd = create ? open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600) : open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return .unavailable(errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return .held
        }
        return .taken(fd)
    }

    /// The refusal naming the live holder, from its record when readable.
    private static func inUse(_ recordPath: String) -> TunnelError {
        let holder = readRecord(recordPath)
        return .hostTunnelInUse(pid: holder?.pid, dataFolder: holder?.dataFolder, device: holder?.device)
    }

    /// Whether what `record` says its holder changed is here: its rule in this namespace's rules
    /// (either family). A namespace deleted with its record left behind, and a new one given the
    /// same inode number (the kernel reuses them), holds none: the record is not about it, and
    /// its rp_filter is the administrator's (a re-check's new namespace had its 2 "restored" to 1).
    public static func isHere(_ record: Record) -> Bool {
        let plan = HostRoutingPlan(device: record.device, table: record.table, mark: record.mark, ipv6: true)
        return ["-4", "-6"].contains { family in
            guard let (code, listing) = try? ChildProcess.run(["ip", family, "rule", "show"]), code == 0 else { return false }
            return plan.isApplied(in: listing)
        }
    }

    static func readRecord(_ path: String) -> Record? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: data)
    }

    /// Says what this holder changed (replacing what a killed one left).
    public func record(_ record: Record) {
        guard let data = try? JSONEncoder().encode(record) else { return }
        try? FileModes.writeAtomically(Array(data), to: recordPath, mode: 0o600)
    }

    /// Everything is undone: the record goes, then the lock (closing its descriptor drops it).
    /// Safe twice.
    public func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        unlink(recordPath)
        close(fd)
    }
}

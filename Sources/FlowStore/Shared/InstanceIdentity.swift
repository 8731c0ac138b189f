import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TVHome
import CTVShims

/// Which `tv` saw a flow, on every row of the shared store: a stable id made once per data
/// folder (a random UUID kept in `$TV_HOME/instance-id`, mode 0600) and the machine's name
/// (`gethostname(2)`); the id is bound to the machine and the data folder's database file
/// (`InstanceBinding`), so a copied data folder takes its own. A shared row's decrypted content, packets and captures are in that
/// instance's data folder on that machine; they never leave it.
public struct InstanceIdentity: Sendable, Hashable {
    /// The instance id: a lowercase UUID.
    public var id: String
    /// The machine's host name when the instance last started.
    public var machine: String
    /// The first flow id recorded under this id when it was renewed from a copied folder's
    /// (`InstanceBinding.firstFlow`); nil: every flow of the data folder is this id's.
    public var firstFlow: Int64?

    /// An identity from its parts.
    public init(id: String, machine: String, firstFlow: Int64? = nil) {
        self.id = id
        self.machine = machine
        self.firstFlow = firstFlow
    }

    /// The file name of the id in the data folder.
    public static let fileName = "instance-id"
    /// The file name of what the id was made for (`InstanceBinding`), beside it.
    public static let bindingFileName = "instance-binding"

    /// An id given up for a new one (`InstanceBinding`): the old id and why.
    public struct Renewal: Sendable, Equatable {
        public var previousID: String
        public var mismatch: InstanceBinding.Mismatch
    }

    /// The data folder's identity: its id (made and kept with mode 0600 the first time) and this
    /// machine's name. The id is bound to this machine and the data folder's database file
    /// (`InstanceBinding`, kept in `bindingFileName`): a data folder that is a copy, a clone or
    /// a restore of the one the id was made for gets a new id (and says so with `renewal`). The
    /// decision is made under an exclusive lock of the binding file, so two programs starting on
    /// one data folder at once take one id.
    /// - Throws: `FlowStoreError.cannotOpen` when the id or binding file cannot be made, read or
    ///   written.
    public static func of(_ home: TVHome) throws -> (identity: InstanceIdentity, renewal: Renewal?) {
        let bindingPath = home.path + "/" + bindingFileName
        let lock = open(bindingPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw FlowStoreError.cannotOpen(path: bindingPath, reason: String(cString: strerror(errno))) }
        defer { Glibc.close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw FlowStoreError.cannotOpen(path: bindingPath, reason: String(cString: strerror(errno))) }
        }
        let (id, made) = try readOrMakeID(home)
        let current = InstanceBinding(machine: InstanceBinding.machine(machineIDFile: try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8),
                                                                       hostName: machineName()),
                                      databaseInode: inode(of: home.databasePath), databaseBirth: birth(of: home.databasePath))
        let stored = made ? nil : InstanceBinding(fileText: readAll(lock))
        switch InstanceBinding.decide(stored: stored, current: current) {
        case .keep:
            return (InstanceIdentity(id: id, machine: machineName(), firstFlow: stored?.firstFlow), nil)
        case .record(let binding):
            try replaceContents(of: lock, path: bindingPath, with: binding.fileText)
            return (InstanceIdentity(id: id, machine: machineName(), firstFlow: binding.firstFlow), nil)
        case .renew(var binding, let mismatch):
            let fresh = UUID().uuidString.lowercased()
            // The flows recorded so far were the other folder's (under the old id).
            binding.firstFlow = highestFlowID(home.databasePath).map { $0 + 1 }
            try writeID(fresh, home: home)
            try replaceContents(of: lock, path: bindingPath, with: binding.fileText)
            return (InstanceIdentity(id: fresh, machine: machineName(), firstFlow: binding.firstFlow), Renewal(previousID: id, mismatch: mismatch))
        }
    }

    /// The id the data folder holds now, without binding or making one; nil when it has none.
    public static func storedID(_ home: TVHome) -> String? {
        guard let text = try? String(contentsOfFile: home.path + "/" + fileName, encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return UUID(uuidString: id) != nil ? id : nil
    }

    /// The id in the data folder, made (mode 0600) when there is none; `made` when it was.
    private static func readOrMakeID(_ home: TVHome) throws -> (id: String, made: Bool) {
        let path = home.path + "/" + fileName
        let fresh = UUID().uuidString.lowercased()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            let line = Array((fresh + "\n").utf8)
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            Glibc.close(fd)
            guard written == line.count else { throw FlowStoreError.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
            return (fresh, true)
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw FlowStoreError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard UUID(uuidString: id) != nil else {
            throw FlowStoreError.cannotOpen(path: path, reason: "it does not hold an instance id; remove it and tv makes a new one")
        }
        return (id.lowercased(), false)
    }

    /// Replaces the id file with `id` (a new file renamed over it: never half written).
    private static func writeID(_ id: String, home: TVHome) throws {
        let path = home.path + "/" + fileName
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FlowStoreError.cannotOpen(path: temporary, reason: String(cString: strerror(errno))) }
        let line = Array((id + "\n").utf8)
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let failure = errno
        Glibc.close(fd)
        guard written == line.count, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(written == line.count ? errno : failure))
            unlink(temporary)
            throw FlowStoreError.cannotOpen(path: path, reason: reason)
        }
    }

    /// The largest flow id ever used in the database at `path` (`FlowIDFloor`); nil when it
    /// cannot be read.
    private static func highestFlowID(_ path: String) -> Int64? {
        guard let database = try? SQLiteDatabase(readingAt: path) else { return nil }
        defer { database.close() }
        if case let .integer(max)? = try? database.scalar(FlowIDFloor.highestSQL) { return max }
        return nil
    }

    /// The inode number of `path`; nil when it cannot be read.
    private static func inode(of path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    /// The birth time of `path` as "SECONDS.NANOSECONDS"; nil when the file system keeps none or
    /// the file cannot be read.
    private static func birth(of path: String) -> String? {
        var seconds: Int64 = 0
        var nanoseconds: UInt32 = 0
        guard tv_file_birth(path, &seconds, &nanoseconds) == 1 else { return nil }
        let fraction = String(nanoseconds)
        return "\(seconds)." + String(repeating: "0", count: max(0, 9 - fraction.count)) + fraction
    }

    /// The whole of an open file (at most 4 KiB), as text.
    private static func readAll(_ fd: Int32) -> String {
        var bytes = [UInt8](repeating: 0, count: 4_096)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? String(decoding: bytes[0..<n], as: UTF8.self) : ""
    }

    /// Writes `text` as the whole of the open file.
    private static func replaceContents(of fd: Int32, path: String, with text: String) throws {
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count, ftruncate(fd, off_t(bytes.count)) == 0 else {
            throw FlowStoreError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// This machine's host name (`gethostname(2)`), or "unknown".
    public static func machineName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        let name = String(cString: buffer)
        return name.isEmpty ? "unknown" : name
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TVHome

/// Which `tv` saw a flow, on every row of the shared store: a stable id made once per data
/// folder (a random UUID kept in `$TV_HOME/instance-id`, mode 0600) and the machine's name
/// (`gethostname(2)`). A shared row's decrypted content, packets and captures are in that
/// instance's data folder on that machine; they never leave it.
public struct InstanceIdentity: Sendable, Hashable {
    /// The instance id: a lowercase UUID.
    public var id: String
    /// The machine's host name when the instance last started.
    public var machine: String

    /// An identity from its parts.
    public init(id: String, machine: String) {
        self.id = id
        self.machine = machine
    }

    /// The file name of the id in the data folder.
    public static let fileName = "instance-id"

    /// The data folder's identity: its id (made and kept with mode 0600 the first time) and this
    /// machine's name.
    /// - Throws: `FlowStoreError.cannotOpen` when the id file cannot be made or read.
    public static func of(_ home: TVHome) throws -> InstanceIdentity {
        let path = home.path + "/" + fileName
        let fresh = UUID().uuidString.lowercased()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            let line = Array((fresh + "\n").utf8)
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            Glibc.close(fd)
            guard written == line.count else { throw FlowStoreError.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
            return InstanceIdentity(id: fresh, machine: machineName())
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw FlowStoreError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard UUID(uuidString: id) != nil else {
            throw FlowStoreError.cannotOpen(path: path, reason: "it does not hold an instance id; remove it and tv makes a new one")
        }
        return InstanceIdentity(id: id.lowercased(), machine: machineName())
    }

    /// This machine's host name (`gethostname(2)`), or "unknown".
    public static func machineName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        let name = String(cString: buffer)
        return name.isEmpty ? "unknown" : name
    }
}

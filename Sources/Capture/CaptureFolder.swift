import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `$TV_HOME/captures`: files `capture-NNNNNN.pcapng` (six digits, from 1), the folder 0700 and
/// each file 0600 (they hold traffic). Names, the sequence numbers in the folder, and whether a
/// file is being recorded (its writer holds an exclusive flock(2) on it for as long as it may
/// append, so a writer that died — killed, crashed — holds none).
public struct CaptureFolder: Sendable, Equatable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// "capture-000042.pcapng".
    public static func fileName(_ seq: Int64) -> String {
        let digits = String(seq)
        return "capture-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".pcapng"
    }

    /// The sequence number of a name `capture-NNNNNN.pcapng` (six or more digits), nil otherwise.
    public static func sequence(ofName name: String) -> Int64? {
        guard name.hasPrefix("capture-"), name.hasSuffix(".pcapng") else { return nil }
        let digits = name.dropFirst("capture-".count).dropLast(".pcapng".count)
        guard digits.count >= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int64(digits), n > 0 else { return nil }
        return n
    }

    public func filePath(_ seq: Int64) -> String { path + "/" + CaptureFolder.fileName(seq) }

    /// Makes the folder (0700) if it is missing, and tightens its files' modes (`tightenFileModes`).
    /// - Throws: `TVHomeError.cannotCreate`.
    public func ensureExists() throws {
        try FileModes.makeDirectory(path, mode: 0o700)
        tightenFileModes()
    }

    /// Makes the files in the folder that group or others may read or write 0600 (bits taken
    /// away only), as the database is at every open: a capture holds packets, and a pcapng its
    /// TLS secrets (a trial's `chmod 644` capture stayed so while the next session put the
    /// folder and the database back). Symbolic links and other users' files are left alone.
    public func tightenFileModes() {
        FileModes.tightenFiles(in: path)
    }

    /// The sequence numbers of the capture files present (unsorted); empty when the folder is missing.
    public func sequencesPresent() -> [Int64] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.compactMap(CaptureFolder.sequence(ofName:))
    }

    /// Opens `path` for reading if it is a regular file: the descriptor, or -1 with `errno` set
    /// (EINVAL: something else is there, a named pipe, a device or a folder). Never blocks: a
    /// named pipe put in a capture's place held `tv packet` and `tv captures delete` forever in
    /// open(2) (a trial).
    public static func openRegularFile(_ path: String) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return -1 }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            errno = EINVAL
            return -1
        }
        return fd
    }

    /// Whether a live writer holds `path` (an exclusive flock): that file is Recording. A file
    /// that cannot be opened (or is no regular file) is not being recorded by anyone.
    public static func isRecording(_ path: String) -> Bool {
        let fd = openRegularFile(path)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            _ = flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }
}

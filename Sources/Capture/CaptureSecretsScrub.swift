import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The TLS secrets a packet capture carries (its Decryption Secrets Blocks, pcapng §4.7, which
/// let Wireshark read the inspected connections in it without a key log) made blank in place.
/// `tv content delete` takes what inspected connections said, and a capture's secrets gave it
/// back: a trial's `tshark -Y http` read requests and bodies after the delete, while `tv content
/// status` said none was kept.
///
/// Blanking keeps every block's length, so every packet keeps its offset (`tv packet` reads its
/// bytes there): each secrets byte becomes a newline, an empty line of the key log that
/// Wireshark's parser skips. A file a session is recording (its writer holds an exclusive
/// flock(2)) is never touched; the scrub holds the same lock while it writes.
public enum CaptureSecretsScrub {
    /// Where one block's secrets lie in a file: byte offset and length.
    public struct Span: Sendable, Equatable {
        public var offset: Int64
        public var length: Int
    }

    /// The secrets of every Decryption Secrets Block of the pcapng file open at `fd`, in file
    /// order. The walk stops at the first block it cannot read (a cut file's last block), or at
    /// once when the file does not begin with a Section Header Block.
    static func spans(fd: Int32) -> [Span] {
        var out: [Span] = []
        var offset: Int64 = 0
        var info = stat()
        guard fstat(fd, &info) == 0 else { return [] }
        let size = Int64(info.st_size)
        var bigEndian = false
        var header = [UInt8](repeating: 0, count: 16)
        func word(_ at: Int) -> UInt32 {
            let b = header[at ..< at + 4].map(UInt32.init)
            return bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
        }
        while true {
            let got = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, off_t(offset)) }
            guard got >= 12 else { break }
            if offset == 0 {
                guard header[0 ..< 4] == [0x0A, 0x0D, 0x0D, 0x0A] else { return [] }
                // The byte-order magic 0x1A2B3C4D as written (§4.1).
                bigEndian = header[8 ..< 12] == [0x1A, 0x2B, 0x3C, 0x4D]
            } else if word(0) == 0x0A0D_0D0A {
                bigEndian = header[8 ..< 12] == [0x1A, 0x2B, 0x3C, 0x4D]
            }
            let length = Int64(word(4))
            // A block past the file's end is a cut one (a writer killed mid-block): not read.
            guard length >= 12, length % 4 == 0, offset + length <= size else { break }
            if word(0) == PcapngBlocks.decryptionSecretsType, got == 16 {
                let secrets = Int64(word(12))
                guard 16 + secrets <= length else { break }
                out.append(Span(offset: offset + 16, length: Int(secrets)))
            }
            offset += length
        }
        return out
    }

    /// How many of `path`'s blocks hold secrets not blanked yet (0 for a file that cannot be
    /// read or holds none).
    public static func secretsHeld(path: String) -> Int {
        let fd = CaptureFolder.openRegularFile(path)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return spans(fd: fd).filter { !isBlank($0, fd: fd) }.count
    }

    /// Blanks every block's secrets in the capture at `path`.
    /// - Returns: the blocks blanked (0: none held any), or nil when a session is recording the
    ///   file (it holds the lock) or it is not a regular file.
    /// - Throws: `CaptureSecretsScrubError` when a block cannot be written.
    public static func scrub(path: String) throws -> Int? {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, flock(fd, LOCK_EX | LOCK_NB) == 0 else { return nil }
        defer { _ = flock(fd, LOCK_UN) }
        var blanked = 0
        for span in spans(fd: fd) where !isBlank(span, fd: fd) {
            let blank = [UInt8](repeating: 0x0A, count: span.length)
            let wrote = blank.withUnsafeBytes { pwrite(fd, $0.baseAddress, span.length, off_t(span.offset)) }
            guard wrote == span.length else {
                throw CaptureSecretsScrubError(path: path, reason: wrote < 0 ? String(cString: strerror(errno)) : "a short write")
            }
            blanked += 1
        }
        if blanked > 0, fsync(fd) != 0 { throw CaptureSecretsScrubError(path: path, reason: String(cString: strerror(errno))) }
        return blanked
    }

    static func isBlank(_ span: Span, fd: Int32) -> Bool {
        var bytes = [UInt8](repeating: 0, count: span.length)
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, span.length, off_t(span.offset)) }
        return got == span.length && bytes.allSatisfy { $0 == 0x0A }
    }
}

/// A capture's secrets could not be blanked.
public struct CaptureSecretsScrubError: UserFacingError, Equatable {
    public let path: String
    public let reason: String

    public var message: String {
        "The TLS secrets in \(path) could not be blanked (\(reason)); check that the file is yours and the disk is writable, then run `tv content delete` again."
    }
}

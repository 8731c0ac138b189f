import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// One packet's bytes read back from its capture file at the offset its row keeps (the seed's
/// `CaptureLibrary.record(at:)`): three short steps, never a scan — read the block header at the
/// offset, check the block's type and length, read the Enhanced Packet Block's fields — then the
/// packet's bytes, whose length (`incl_len`) is bounded by the file's snap length before
/// anything is allocated, and which are returned only when the record describes this packet (its
/// `orig_len` and its timestamp equal the row's): showing another record would show another
/// connection's traffic (a file copied over another, with a packet of the same length at the
/// same offset, drew another query's bytes when only the length was compared: a trial).
public enum CaptureRecord {
    /// What reading a row's record found.
    public enum Outcome: Sendable, Equatable {
        /// The packet's bytes: all of them, or (`includedLength` < the row's original length) what
        /// the snap length kept.
        case bytes([UInt8])
        /// The file was deleted (`tv captures delete`, retention) or is no longer there: the bytes
        /// are gone; the connection stays in the history.
        case deleted
        /// The file is there but reading it failed (an I/O error): worth trying again.
        case readFailed(String)
        /// The file is there but damaged at the record's place (it ends before the record, or the
        /// block there is not this kind of record or cannot hold what it says): changed or cut
        /// after tv wrote it; trying again finds the same (a new-user trial was told to retry).
        case damaged(String)
        /// The record there does not describe this packet (its `orig_len` or its timestamp, µs
        /// since the epoch, differs from the row's): not drawn.
        case notThisPacket(recordLength: Int, recordTimeMicros: Int64)
        /// The file was closed before this packet's bytes reached it: its writer ended without
        /// writing them (killed, or crashed; the next session cut the file back to whole packets,
        /// `CaptureRepair`), though its row had been made. `fileBytes`: what the file holds.
        case neverWritten(fileBytes: Int64)
        /// The file being recorded ends before the record: the packet is still in the capture
        /// writer's buffer (the held-back tail, `CaptureFileAppender`) and reaches the file within
        /// `CaptureConfiguration.tailInterval`, or when the capture is rotated or stopped.
        case notYetWritten
    }

    /// The Enhanced Packet Block's fixed part (pcapng §4.3): type, total length, interface id,
    /// timestamp high and low, captured and original lengths, 4 bytes each, little-endian (the
    /// byte order tv's Section Header declares).
    public static let headerSize = 28

    /// The checked fields of an EPB header.
    public struct Header: Sendable, Equatable {
        public var includedLength: Int
        public var originalLength: Int
    }

    /// What `check` found: the header's fields, or why the record is not read.
    public enum Check: Sendable, Equatable {
        case header(Header)
        case refused(Outcome)
    }

    /// Checks the 28 header bytes of the block at a row's offset: its type is an EPB (6), its
    /// total length holds the header, the captured bytes (padded to 4) and the trailing length;
    /// `incl_len` is at most the file's snap length (when it has one) and at most `orig_len`;
    /// `orig_len` and the timestamp equal the row's.
    /// - Parameters:
    ///   - snapLength: the file's snap length (0: whole packets, bounded then by 65,535 + 40,
    ///     the largest IP packet a TUN carries).
    ///   - rowOriginalLength: the packet's length as its row keeps it.
    ///   - rowTimeMicros: the packet's time as its row keeps it (µs since the epoch, the
    ///     resolution of tv's interface description); nil: not compared.
    public static func check(_ header: [UInt8], snapLength: Int, rowOriginalLength: Int, rowTimeMicros: Int64? = nil) -> Check {
        guard header.count == headerSize else { return .refused(.damaged("the record ends early")) }
        func u32(_ i: Int) -> Int { Int(header[i]) | Int(header[i + 1]) << 8 | Int(header[i + 2]) << 16 | Int(header[i + 3]) << 24 }
        guard u32(0) == 6 else {
            return .refused(.damaged("the block at that offset is not an Enhanced Packet Block (pcapng §4.3), type \(u32(0))"))
        }
        let total = u32(4), included = u32(20), original = u32(24)
        let bound = snapLength > 0 ? snapLength : 65_535 + 40
        guard included <= bound else {
            return .refused(.damaged("the record says it holds \(included) bytes, more than the file keeps of a packet (\(bound))"))
        }
        guard included <= original else {
            return .refused(.damaged("the record says it holds \(included) bytes of a packet of \(original) (pcapng §4.3: never more than the packet had)"))
        }
        guard total >= headerSize + included + (4 - included % 4) % 4 + 4, total % 4 == 0 else {
            return .refused(.damaged("the block's length \(total) cannot hold its \(included) bytes (pcapng §3.1)"))
        }
        let time = Int64(u32(12)) << 32 | Int64(u32(16))
        guard original == rowOriginalLength, rowTimeMicros.map({ $0 == time }) ?? true else {
            return .refused(.notThisPacket(recordLength: original, recordTimeMicros: time))
        }
        return .header(Header(includedLength: included, originalLength: original))
    }

    /// Reads the record at `offset` of the file at `path`; `isRecording`: a live writer holds the
    /// file, so a file ending before the record is `.notYetWritten`, not `.damaged`.
    public static func read(path: String, offset: Int64, snapLength: Int, rowOriginalLength: Int, rowTimeMicros: Int64? = nil,
                            isRecording: Bool = false) -> Outcome {
        let fd = CaptureFolder.openRegularFile(path)
        guard fd >= 0 else {
            let e = errno
            if e == EINVAL { return .damaged("it is no longer a regular file (a named pipe, a device or a folder is in its place)") }
            return e == ENOENT ? .deleted : .readFailed(Errno(e).phrase)
        }
        defer { close(fd) }
        /// `count` bytes at `position` as `.bytes`, or why they could not be read.
        func pread(_ count: Int, at position: Int64) -> Outcome {
            var out = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = out.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress! + done, count - done, off_t(position) + off_t(done)) }
                if n < 0 && errno == EINTR { continue }
                if n < 0 { return .readFailed(Errno(errno).phrase) }
                if n == 0 { return isRecording ? .notYetWritten : .damaged("the file ends before the record does") }
                done += n
            }
            return .bytes(out)
        }
        let first = pread(headerSize, at: offset)
        guard case .bytes(let header) = first else { return first }
        switch check(header, snapLength: snapLength, rowOriginalLength: rowOriginalLength, rowTimeMicros: rowTimeMicros) {
        case .refused(let outcome): return outcome
        case .header(let fields): return pread(fields.includedLength, at: offset + Int64(headerSize))
        }
    }
}

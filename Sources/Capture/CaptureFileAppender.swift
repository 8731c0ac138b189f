import CTVShims
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// How a capture file's bytes reach the disk, for `tv status` (`capture.writeMode`,
/// `decryptedCapture.writeMode`).
public enum CaptureWriteMode: String, Sendable, Equatable {
    /// O_DIRECT: whole blocks straight from tv's buffer to the disk, skipping the page cache
    /// (the kernel's copy into new page-cache pages cost more CPU per byte than the bulk path).
    case direct
    /// Ordinary write(2)s through the page cache: the file system refused O_DIRECT (EINVAL,
    /// e.g. ramfs, or tmpfs before Linux 6.6), or it was not asked for.
    case buffered
}

/// One capture file written only at its end, by one thread (not Sendable: the writer thread
/// owns it). The file is created 0600, never over an existing one.
///
/// Direct mode: appended bytes are copied into a page-aligned buffer; every whole block
/// (the file system's direct I/O offset alignment, statx STATX_DIOALIGN, else 4096 bytes) is
/// written with O_DIRECT from it, the buffer's `bufferBytes` at a time. The tail past the last
/// whole block (under one block) is held back in the buffer, the start of the next direct
/// write: `append` leaves it out of the file, so `written` (the bytes in the file) may trail
/// `end` (the bytes appended) by up to one block. `writeTail` writes it through a second,
/// buffered descriptor (the capture writers do so on a timer, `CaptureTailSchedule`, at rotation
/// and at stop), after which the file ends exactly at the last byte appended (never padded).
/// Writing the tail at every append would make each next direct write over that page flush and
/// invalidate it; held back, the page cache sees one tail per timer tick, not the bulk.
/// A killed writer leaves the file up to its last whole block written (`CaptureRepair` cuts it
/// back to whole pcapng blocks).
///
/// A failed `append` cuts the file back to where it ended on disk before (ftruncate) and forgets
/// what it appended, so the file stays whole blocks of pcapng; an EINVAL from an O_DIRECT write
/// turns the file buffered for good and the append is retried that way (the held tail first).
public final class CaptureFileAppender {
    /// The direct buffer's size when none is given: 4 MiB (O_DIRECT costs ~0.12 ns of kernel CPU
    /// per byte in 4 MiB writes, ~0.2 in 1 MiB ones on the benchmark machine). Its pages become
    /// resident only as they are filled.
    public static let defaultBufferBytes = 4 << 20

    /// Where the file is.
    public let path: String
    /// How its bytes are written now.
    public private(set) var mode: CaptureWriteMode
    /// Bytes appended (the file's logical end: rows may point anywhere before it).
    public private(set) var end: Int64 = 0
    /// Bytes in the file now: `end` in buffered mode; in direct mode at least the last whole
    /// block, `end` once `writeTail` ran after the last append.
    public private(set) var written: Int64 = 0
    /// Bytes appended but not yet in the file (the held tail not yet written, under one block).
    public var pending: Int { Int(end - written) }
    /// The buffered descriptor (flock, fdatasync, the tail); valid until `handOver`.
    public private(set) var descriptor: Int32
    /// The direct write unit: file offsets and lengths of O_DIRECT writes are multiples of it.
    public let blockBytes: Int

    private var directDescriptor: Int32
    /// The direct buffer's memory (`CaptureMemory`: 2 MiB-aligned, huge pages where the kernel
    /// gives them, so O_DIRECT pins a few large pages per write, not a thousand small ones).
    private let memory: CaptureMemory?
    private let buffer: UnsafeMutableRawPointer?
    private let capacity: Int
    /// The alignment direct I/O asks of memory (STATX_DIOALIGN's, at least a page).
    private let directMemoryAlignment: Int
    /// Bytes in `buffer`: the file's bytes from `end - held` (a block boundary) to `end`.
    private var held = 0

    /// Creates the file (0600, never over one that exists) holding an exclusive flock(2) on it
    /// until the appender goes: the file is Recording (`CaptureFolder.isRecording`) from the
    /// moment its name exists (`tv_create_locked`). Before, it was locked after it was made and
    /// its O_DIRECT descriptor and buffer set up, and a `tv exec` starting then deleted another
    /// session's new capture file as one no writer held (a new-user trial). With `direct`, opens
    /// it a second time with O_DIRECT, and falls back to buffered writes when the file system
    /// refuses (said by `mode`).
    /// - Throws: `Errno` from creating the file (EEXIST when it exists).
    public init(creating path: String, direct: Bool = true, bufferBytes: Int = CaptureFileAppender.defaultBufferBytes) throws(Errno) {
        self.path = path
        let fd = tv_create_locked(path, 0o600)
        guard fd >= 0 else { throw Errno(errno) }
        descriptor = fd
        var directFD: Int32 = -1
        if direct { directFD = open(path, O_WRONLY | O_CLOEXEC | tv_o_direct()) }
        var memoryAlignment: UInt32 = 0
        let offsetAlignment = directFD >= 0 ? Int(tv_dio_offset_alignment(directFD, &memoryAlignment)) : 0
        let block = offsetAlignment > 0 && offsetAlignment.nonzeroBitCount == 1 ? offsetAlignment : 4096
        let page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        let alignment = max(page, block, Int(memoryAlignment).nonzeroBitCount == 1 ? Int(memoryAlignment) : 0)
        blockBytes = block
        directMemoryAlignment = alignment
        capacity = max(block, bufferBytes / block * block)
        // CaptureMemory is 2 MiB-aligned: enough for any direct I/O alignment up to that.
        let mapped = directFD >= 0 && alignment <= CaptureMemory.hugePageBytes ? CaptureMemory(capacity: capacity) : nil
        if directFD >= 0, mapped == nil {
            close(directFD)
            directFD = -1
        }
        memory = mapped
        buffer = mapped?.base
        directDescriptor = directFD
        mode = directFD >= 0 ? .direct : .buffered
    }

    deinit {
        if directDescriptor >= 0 { close(directDescriptor) }
        if descriptor >= 0 { close(descriptor) }
    }

    /// Appends `parts`, in order, at the file's end.
    /// - Returns: nil when every byte is in the file; else why not (the file is as it was).
    public func append(_ parts: [UnsafeRawBufferPointer]) -> Errno? {
        guard descriptor >= 0 else { return Errno(EBADF) }
        if mode == .direct, let failure = appendDirect(parts) {
            guard failure.code == EINVAL else { return failure }
            if let failure = becomeBuffered() { return failure }
        } else if mode == .direct {
            return nil
        }
        return appendBuffered(parts)
    }

    /// Appends one run of bytes (`append([bytes])`).
    public func append(_ bytes: UnsafeRawBufferPointer) -> Errno? { append([bytes]) }

    /// The offset from a block boundary of the file at which bytes appended next land: where
    /// `append(inPlace:leading:count:)` wants its bytes to start; nil when the file is not
    /// written directly (every append copies then).
    public var inPlaceOffset: Int? { mode == .direct && descriptor >= 0 && buffer != nil ? held : nil }

    /// Appends `count` bytes found at `memory + leading` with O_DIRECT from that memory itself
    /// (the copy into the direct buffer skipped): the held tail is copied into the `leading`
    /// bytes in front of them (the caller's, free to overwrite), every whole block from `memory`
    /// is written, and the new tail past the last one is copied into the buffer and held.
    /// Used only when `leading` is `inPlaceOffset` and `memory` is aligned for direct I/O;
    /// otherwise the bytes are appended as `append` does (copied).
    /// Measured: the copy skipped was the capture writer's largest user-space cost in the bulk
    /// rows (`memmove` into this buffer, 88 of its 454 perf samples, i25-cap).
    /// - Returns: nil when every byte is in the file; else why not (the file is as it was).
    public func append(inPlace memory: UnsafeMutableRawPointer, leading: Int, count: Int) -> Errno? {
        let bytes = UnsafeRawBufferPointer(start: memory + leading, count: count)
        guard count > 0, inPlaceOffset == leading, Int(bitPattern: memory) % directMemoryAlignment == 0, let buffer else {
            return append([bytes])
        }
        if held > 0 { memory.copyMemory(from: buffer, byteCount: held) }
        let total = held + count
        let whole = total / blockBytes * blockBytes
        let alignedEnd = end - Int64(held)
        if whole > 0 {
            if let failure = writeAll(directDescriptor, memory, whole, at: alignedEnd) {
                // The file as it was on disk ends at `written`; the held tail is still in the
                // buffer, untouched.
                _ = ftruncate(descriptor, off_t(written))
                guard failure.code == EINVAL else { return failure }
                if let tailFailure = becomeBuffered() { return tailFailure }
                return appendBuffered([bytes])
            }
        }
        let rest = total - whole
        if rest > 0 { buffer.copyMemory(from: memory + whole, byteCount: rest) }
        held = rest
        end = alignedEnd + Int64(total)
        written = max(written, alignedEnd + Int64(whole))
        return nil
    }

    /// Writes the held tail (direct mode) through the buffered descriptor, so the file ends at
    /// the last byte appended; nothing when `pending` is 0.
    /// - Returns: nil when every byte appended is in the file; else why not (the file is cut
    ///   back to what it held before, the tail stays held for the next try or direct write).
    public func writeTail() -> Errno? {
        guard pending > 0, let buffer, descriptor >= 0 else { return nil }
        // The held bytes are the file's from `end - held`; those before `written` are there.
        let alreadyThere = Int(written - (end - Int64(held)))
        if let failure = writeAll(descriptor, buffer + alreadyThere, held - alreadyThere, at: written) {
            _ = ftruncate(descriptor, off_t(written))
            return failure
        }
        written = end
        return nil
    }

    /// Writes the held tail (`writeTail`), gives up the buffered descriptor (the caller syncs
    /// and closes it), closes the direct one and frees the buffer's use. Later appends fail.
    /// - Returns: the descriptor (-1 when handed over before) and why the tail could not be
    ///   written (nil: every byte appended is in the file; else the file ends at `written`).
    public func handOver() -> (descriptor: Int32, tailFailure: Errno?) {
        let tailFailure = descriptor >= 0 ? writeTail() : nil
        if directDescriptor >= 0 { close(directDescriptor) }
        directDescriptor = -1
        let fd = descriptor
        descriptor = -1
        return (fd, tailFailure)
    }

    // MARK: writing

    /// The file system took the O_DIRECT open but not a write (EINVAL): buffered from now on,
    /// the held tail written first (it is in the buffer, not yet in the file).
    /// - Returns: nil, or why the held tail could not be written.
    private func becomeBuffered() -> Errno? {
        close(directDescriptor)
        directDescriptor = -1
        mode = .buffered
        if let failure = writeTail() { return failure }
        held = 0
        return nil
    }

    private func appendBuffered(_ parts: [UnsafeRawBufferPointer]) -> Errno? {
        let start = end
        for part in parts where part.count > 0 {
            if let failure = writeAll(descriptor, part.baseAddress!, part.count, at: end) {
                _ = ftruncate(descriptor, off_t(start))
                end = start
                written = start
                return failure
            }
            end += Int64(part.count)
            written = end
        }
        return nil
    }

    private func appendDirect(_ parts: [UnsafeRawBufferPointer]) -> Errno? {
        guard let buffer else { return Errno(EINVAL) }
        let startEnd = end
        let startWritten = written
        let startHeld = held
        // The held tail (under one block) is what a failure must put back.
        let savedTail = [UInt8](UnsafeRawBufferPointer(start: buffer, count: held))
        var alignedEnd = end - Int64(held)
        func fail(_ failure: Errno) -> Errno {
            // Direct writes rewrote the held tail's bytes as they were and then new ones: the
            // file as it was on disk ends at `startWritten`.
            _ = ftruncate(descriptor, off_t(startWritten))
            savedTail.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: startHeld) }
            held = startHeld
            end = startEnd
            written = startWritten
            return failure
        }
        for part in parts {
            var offset = 0
            while offset < part.count {
                let n = min(part.count - offset, capacity - held)
                (buffer + held).copyMemory(from: part.baseAddress! + offset, byteCount: n)
                held += n
                offset += n
                if held == capacity {
                    if let failure = writeAll(directDescriptor, buffer, capacity, at: alignedEnd) { return fail(failure) }
                    alignedEnd += Int64(capacity)
                    held = 0
                }
            }
        }
        let whole = held / blockBytes * blockBytes
        if whole > 0 {
            if let failure = writeAll(directDescriptor, buffer, whole, at: alignedEnd) { return fail(failure) }
            alignedEnd += Int64(whole)
            held -= whole
            if held > 0 { buffer.copyMemory(from: buffer + whole, byteCount: held) }
        }
        // The tail stays held (`writeTail`); a tail written before stays in the file.
        end = alignedEnd + Int64(held)
        written = max(written, alignedEnd)
        return nil
    }

    /// pwrite(2) until all of it is written (EINTR retried; a write of 0 bytes is ENOSPC).
    private func writeAll(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int, at offset: Int64) -> Errno? {
        var done = 0
        while done < count {
            let n = pwrite(fd, base + done, count - done, off_t(offset + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                return Errno(errno)
            }
            if n == 0 { return Errno(ENOSPC) }
            done += n
        }
        return nil
    }
}

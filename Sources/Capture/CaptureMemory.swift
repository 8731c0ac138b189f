#if canImport(Glibc)
import Glibc
#endif

/// Anonymous memory for the capture's large buffers (the queue's batch of blocks, the O_DIRECT
/// buffer of `CaptureFileAppender`): mapped 2 MiB-aligned and advised `MADV_HUGEPAGE`, so that
/// a kernel with transparent huge pages in `madvise` mode (the default of most distributions)
/// backs it with 2 MiB pages past the first 2 MiB (`init`). Pages are still resident only once
/// touched.
///
/// Measured (perf, `Scripts/bench-tunnel` bulk rows, 256 MiB per `tv exec` session, before
/// this type): 211 of the TUN engine thread's 1,016 samples were page faults in
/// `CaptureBatch.add` (the two 16 MiB batches grown by doubling and first touched on the
/// engine thread in each session: ~16 k faults of 4 KiB a session), about two thirds of what
/// the capture hand-off cost that thread; and `gup_fast_fallback` (pinning each 4 KiB page of
/// the O_DIRECT buffer for every write) was 8 % of the capture writer's samples.
///
/// Not thread-safe by itself: its owner says who touches it when.
public final class CaptureMemory {
    /// The usable memory: `capacity` bytes, 2 MiB-aligned.
    public let base: UnsafeMutableRawPointer
    /// Bytes usable from `base`.
    public let capacity: Int
    private let mapped: UnsafeMutableRawPointer
    private let mappedLength: Int

    /// The alignment asked for (a huge page on x86-64 and arm64 with 4 KiB base pages).
    public static let hugePageBytes = 2 << 20

    /// Maps `capacity` bytes (rounded up to whole 4 KiB pages); nil when mmap(2) fails.
    public init?(capacity: Int) {
        let page = 4096
        let length = max(page, (capacity + page - 1) / page * page)
        let total = length + Self.hugePageBytes
        guard let raw = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
              raw != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        let address = UInt(bitPattern: raw)
        let aligned = (address + UInt(Self.hugePageBytes) - 1) & ~(UInt(Self.hugePageBytes) - 1)
        mapped = raw
        mappedLength = total
        base = UnsafeMutableRawPointer(bitPattern: aligned)!
        self.capacity = length
        // Advice only: where THP is off (or `never`), the memory is ordinary 4 KiB pages. The
        // first 2 MiB stay 4 KiB pages: an idle or lightly used session touches only the start of
        // each buffer (a file's head, a few packets), which as a huge page cost 2 MiB of RSS
        // (measured: an idle `tv exec` 8.1 MiB anonymous against 6.1 without any advice); a bulk
        // transfer fills the rest, where the huge pages save the faults and the pinning.
        if length > Self.hugePageBytes {
            _ = madvise(base + Self.hugePageBytes, length - Self.hugePageBytes, MADV_HUGEPAGE)
        }
    }

    deinit { munmap(mapped, mappedLength) }
}

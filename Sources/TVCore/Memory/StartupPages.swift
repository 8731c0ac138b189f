import CTVShims
import Glibc

/// Drops the start-up pages of the loaded objects once `tv run` is serving (issue 21): the I/O
/// side of `StartupPagePlan`, which decides which pages may go.
public enum StartupPages {
    /// Bytes `madvise(MADV_DONTNEED)` accepted, and the ranges it refused (none on Linux for
    /// private file mappings; counted so a refusal is visible in `tv diag`-style reports).
    public struct Release: Equatable, Sendable {
        public var bytes: Int
        public var refused: Int
    }

    /// The segments of every loaded object but the vDSO (`dl_iterate_phdr`).
    public static func segments() -> [StartupPagePlan.Segment] {
        var capacity = 64
        while true {
            var raw = [tv_segment](repeating: tv_segment(), count: capacity)
            let count = Int(tv_loaded_segments(&raw, Int32(capacity)))
            if count <= capacity {
                return raw.prefix(count).map {
                    StartupPagePlan.Segment(start: UInt($0.start), end: UInt($0.end), writable: $0.flags & 2 != 0,  // PF_W
                                            relro: $0.relro != 0, object: Int($0.object), textRelocated: $0.text_relocated != 0)
                }
            }
            capacity = count
        }
    }

    /// Drops the pages `StartupPagePlan` allows for `scope`; the next access to any of them maps
    /// the same bytes again from the page cache. Then `malloc_trim(0)` hands the free memory the
    /// start-up left in the heap and the threads' arenas back to the kernel: measured on a resting
    /// release `tv run` (called through gdb at 5 s), anonymous memory 4,792 → 4,008 KiB.
    @discardableResult
    public static func release(scope: StartupPagePlan.Scope) -> Release {
        let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var result = Release(bytes: 0, refused: 0)
        for range in StartupPagePlan.ranges(segments(), pageSize: pageSize, scope: scope) {
            let length = Int(range.upperBound - range.lowerBound)
            if madvise(UnsafeMutableRawPointer(bitPattern: range.lowerBound), length, MADV_DONTNEED) == 0 {
                result.bytes += length
            } else {
                result.refused += 1
            }
        }
        // glibc's malloc_trim(3), looked up at run time: Swift's Glibc module has no <malloc.h>.
        if let trim = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        return result
    }
}

/// Which pages of the loaded objects a resting `tv run` stops mapping (issue 21, memory at rest).
///
/// Start-up runs code and reads constants that a resting proxy never touches again, and each
/// touched page of a file mapping also maps its neighbours (the kernel's 64 KiB fault-around).
/// Measured on a release `tv run` at rest (`/proc/PID/smaps`, 2026-12-02, PERFORMANCE.md "Start-up
/// pages dropped at rest"): 7.5 MiB of tv's own file pages stayed resident, and none of them were
/// touched again in the following seconds at rest. Only pages whose content is exactly the file's
/// may be dropped: then `madvise(MADV_DONTNEED)` removes them from the process (they stay in the
/// page cache) and the next access maps the same bytes again. That holds for a segment that is
/// neither writable nor relocated: not `PF_W`, not inside `PT_GNU_RELRO` (written by the dynamic
/// linker, then protected), and not in an object with text relocations. Everything else (data,
/// relocated pointers, heap, stacks) is never in the plan.
public enum StartupPagePlan {
    /// One `PT_LOAD` or `PT_GNU_RELRO` segment of a loaded object, at its run-time addresses.
    public struct Segment: Equatable, Sendable {
        /// First byte and one past the last byte in memory (`p_memsz`).
        public var start: UInt
        public var end: UInt
        /// `p_flags` has `PF_W`.
        public var writable: Bool
        /// A `PT_GNU_RELRO` range rather than a `PT_LOAD` segment.
        public var relro: Bool
        /// Index of the object in the dynamic linker's order: 0 is the program itself.
        public var object: Int
        /// The object has text relocations (`DT_TEXTREL`): its read-only pages were written at load.
        public var textRelocated: Bool

        public init(start: UInt, end: UInt, writable: Bool, relro: Bool = false, object: Int, textRelocated: Bool = false) {
            self.start = start
            self.end = end
            self.writable = writable
            self.relro = relro
            self.object = object
            self.textRelocated = textRelocated
        }
    }

    /// Whose pages are dropped.
    public enum Scope: Equatable, Sendable {
        /// The `tv` executable's own (with `--static-swift-stdlib`: tv, the Swift runtime and
        /// Foundation).
        case program
        /// Every loaded object's, libraries included (libcrypto, SQLite, libc...).
        case everyObject
    }

    /// The page-aligned ranges `[start, end)` to drop, ascending and merged: each read-only,
    /// unrelocated segment of the objects in `scope`, widened to whole pages, less every page
    /// that also holds a writable or RELRO byte of any object. `pageSize` is a power of two.
    public static func ranges(_ segments: [Segment], pageSize: UInt, scope: Scope) -> [Range<UInt>] {
        let mask = pageSize - 1
        func widened(_ s: Segment) -> Range<UInt> { (s.start & ~mask)..<((s.end + mask) & ~mask) }
        let kept = segments.filter { $0.writable || $0.relro }.map(widened).sorted { $0.lowerBound < $1.lowerBound }
        var out: [Range<UInt>] = []
        for s in segments where !s.writable && !s.relro && !s.textRelocated && s.start < s.end {
            if scope == .program && s.object != 0 { continue }
            var pieces = [widened(s)]
            for k in kept {
                pieces = pieces.flatMap { p -> [Range<UInt>] in
                    guard p.overlaps(k) else { return [p] }
                    var parts: [Range<UInt>] = []
                    if p.lowerBound < k.lowerBound { parts.append(p.lowerBound..<k.lowerBound) }
                    if k.upperBound < p.upperBound { parts.append(k.upperBound..<p.upperBound) }
                    return parts
                }
            }
            out += pieces
        }
        out.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<UInt>] = []
        for r in out {
            if let last = merged.last, r.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, r.upperBound)
            } else {
                merged.append(r)
            }
        }
        return merged
    }
}

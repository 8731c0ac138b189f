import CTVShims

extension InternetChecksum {
    /// Copies `source` to `destination` (`source.count` bytes; the two must not overlap) and
    /// returns `sum(source)`, in one pass over the bytes (`tv_copy_and_sum32`: each word is read
    /// once, stored and added while in a register). The decrypted capture's loop copies every
    /// plaintext byte into its batch and sums it for the segment's checksum. Measured: apart
    /// (memcpy, then `sum` reading the source again) 0.15 ns/B in a C microbenchmark (a 16 MiB
    /// store that stays in L3), fused 0.06; in tv's loop (perf, `Scripts/bench-decrypted`'s bulk
    /// download, before/after pairs in the same minute) the two cost the same within the
    /// samples' spread: the stores into the batch's cold store are most of it (PERFORMANCE.md,
    /// i28-dcap).
    public static func copyAndSum(_ source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) -> UInt32 {
        guard let base = source.baseAddress, source.count > 0 else { return 0 }
        let count = source.count
        let words = tv_copy_and_sum32(destination, base, count)
        return folded(addingTail(words, base, from: count & ~3, count: count), initial: 0)
    }
}

import CTVShims

extension InternetChecksum {
    /// Copies `source` to `destination` (`source.count` bytes; the two must not overlap) and
    /// returns `sum(source)`, in one pass over the bytes (`tv_copy_and_sum32`: each word is read
    /// once, stored and added while in a register). The decrypted capture's loop copies every
    /// plaintext byte into its batch and sums it for the segment's checksum: measured apart
    /// (memcpy, then `sum` reading the source again) 0.15 ns/B in a C microbenchmark, fused 0.06.
    public static func copyAndSum(_ source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) -> UInt32 {
        guard let base = source.baseAddress, source.count > 0 else { return 0 }
        let count = source.count
        let words = tv_copy_and_sum32(destination, base, count)
        return folded(addingTail(words, base, from: count & ~3, count: count), initial: 0)
    }
}

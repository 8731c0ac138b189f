/// Where the decrypted capture's file ends whole on disk, and what lies past that (pure).
///
/// The writer appends whole pcapng blocks, but with O_DIRECT only whole disk blocks reach the
/// file at once: the tail past the last one waits in the appender's buffer
/// (`CaptureFileAppender.written` trails `end` by up to a disk block). A file closed while that
/// tail cannot be written (a full disk) ends mid-packet: capinfos said "cut short in the middle
/// of a packet" after a clean `tv stop`, and the next start's repair blamed a kill (a trial).
/// The ledger keeps the end of every run of blocks appended (each is a block boundary) that is
/// not yet known to be on disk, with the packets, plaintext bytes and flow it carried: `settle`
/// drops those the disk holds, remembering the last as `wholeOnDisk`, the length the file is cut
/// back to when it is closed without its tail; what stays (`unwritten`) is counted as lost. Only
/// the entries past `written` are kept, so it holds a disk block's worth at most.
struct DecryptedCaptureLedger: Equatable {
    /// One run appended: where it ends in the file, and what it carried.
    struct Entry: Equatable {
        /// Bytes from the file's start to the run's end (a block boundary).
        var end: Int64
        /// Enhanced Packet Blocks in the run.
        var packets: Int
        /// Plaintext bytes those packets carried (0 for handshakes, ends and the file's head).
        var bytes: Int
        /// The flow the run belongs to (nil: the file's head, or reopened streams).
        var flow: UInt64?
    }

    /// Where the file's last whole block known to be on disk ends.
    private(set) var wholeOnDisk: Int64 = 0
    /// Runs appended past `wholeOnDisk`, in file order.
    private(set) var pending: [Entry] = []

    /// A run was appended (its end is past every earlier one).
    mutating func appended(_ entry: Entry) { pending.append(entry) }

    /// The file holds its first `written` bytes: every run ending there or before is whole on disk.
    mutating func settle(written: Int64) {
        var whole = 0
        while whole < pending.count, pending[whole].end <= written { whole += 1 }
        guard whole > 0 else { return }
        wholeOnDisk = pending[whole - 1].end
        pending.removeFirst(whole)
    }

    /// What the runs not on disk carried: packets, plaintext bytes, and their flows in order
    /// (each once).
    var unwritten: (packets: Int, bytes: Int, flows: [UInt64]) {
        var flows: [UInt64] = []
        for entry in pending { if let flow = entry.flow, !flows.contains(flow) { flows.append(flow) } }
        return (pending.reduce(0) { $0 + $1.packets }, pending.reduce(0) { $0 + $1.bytes }, flows)
    }
}

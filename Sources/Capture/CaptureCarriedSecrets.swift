/// The TLS secrets a new capture file starts with: the newest Decryption Secrets Blocks already
/// written to earlier files, so that each file decrypts on its own (README: "Wireshark and
/// `tshark -r FILE -Y http` show the HTTP inside without a key log").
///
/// A batch's secrets go into the file its first packet goes to; a connection whose packets go on
/// past a rotation (in the same batch, or for minutes after) had its secrets only in the file
/// before. A trial with `capture.rotateBytes 1MB` and six 400 KB downloads: the next file held
/// three ClientHellos and the secrets of one. Every new file now begins (after its section header
/// and interface description) with the secrets carried here.
///
/// Bounded: the newest `limitBytes` of whole blocks (a batch's blocks are one chunk, never split);
/// the oldest chunks go first, so a connection that outlives about `limitBytes` of newer secrets
/// (~1,200 inspected TLS 1.3 connections for 1 MiB: five lines of ~170 bytes each) is decrypted
/// only in the files before. Pure value; the writer thread owns it.
struct CaptureCarriedSecrets: Sendable {
    /// The most bytes carried (whole chunks; a single newer chunk larger than this is kept alone).
    let limitBytes: Int
    /// Chunks of whole Decryption Secrets Blocks, oldest first.
    private var chunks: [[UInt8]] = []
    /// Bytes in `chunks`.
    private(set) var bytes = 0

    /// The limit unless a file rotated by size is small (then a quarter of its size): 1 MiB.
    static let defaultLimitBytes = 1 << 20

    init(limitBytes: Int = defaultLimitBytes) { self.limitBytes = max(limitBytes, 0) }

    /// Adds `blocks` (whole Decryption Secrets Blocks, as a batch carries them) as the newest
    /// chunk, dropping the oldest chunks past the limit.
    mutating func add(_ blocks: [UInt8]) {
        guard !blocks.isEmpty else { return }
        chunks.append(blocks)
        bytes += blocks.count
        var drop = 0
        while bytes > limitBytes && chunks.count - drop > 1 {
            bytes -= chunks[drop].count
            drop += 1
        }
        if drop > 0 { chunks.removeFirst(drop) }
    }

    /// The carried blocks, oldest first, back to back (what a new file starts with).
    var blocks: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes)
        for chunk in chunks { out += chunk }
        return out
    }
}

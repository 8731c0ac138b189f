/// When the content queue takes an event, and when its writer stops gathering and writes: a pure
/// decision over the queue's figures, so the limits and the linger can be tested without threads.
///
/// The writer, woken by the first event after a quiet spell, gathers for up to `lingerMillis`
/// before it writes, so that a burst of chunks and turn ends costs one transaction, one segment
/// `write(2)` and one wake-up instead of one of each per event. It writes at once when the queue
/// is half full by any of its limits, so producers keep room (nothing is dropped that a shorter
/// wait would have kept), and when someone waits (`flush`, `stop`, a job).
struct ContentBatchPolicy: Sendable, Equatable {
    /// Chunk bytes the queue holds at most.
    var bytes: Int64
    /// Chunk events the queue holds at most.
    var chunks: Int
    /// Turn-end events the queue holds at most (a reserve apart from chunks).
    var ends: Int
    /// How long the writer gathers after a wake-up, milliseconds (0: never).
    var lingerMillis: Int

    /// Limits below 1 count as 1; a negative linger as 0.
    init(bytes: Int64, chunks: Int, ends: Int, lingerMillis: Int) {
        self.bytes = max(bytes, 1)
        self.chunks = max(chunks, 1)
        self.ends = max(ends, 1)
        self.lingerMillis = max(lingerMillis, 0)
    }

    /// Whether a chunk of `count` kept bytes fits beside `pendingChunks` chunks holding
    /// `pendingBytes` bytes.
    func admitsChunk(count: Int, pendingBytes: Int64, pendingChunks: Int) -> Bool {
        pendingChunks < chunks && pendingBytes + Int64(count) <= bytes
    }

    /// Whether a turn end fits beside `pendingEnds` queued ones.
    func admitsEnd(pendingEnds: Int) -> Bool {
        pendingEnds < ends
    }

    /// Whether a queue holding this much should be written now instead of at the end of the
    /// linger: half of any limit reached.
    func writeNow(pendingBytes: Int64, pendingChunks: Int, pendingEnds: Int) -> Bool {
        pendingBytes * 2 >= bytes || pendingChunks * 2 >= chunks || pendingEnds * 2 >= ends
    }
}

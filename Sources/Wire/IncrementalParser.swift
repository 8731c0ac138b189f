/// A bounded parser fed a byte stream in pieces of any length: each type implements `feed` for a
/// buffer of bytes, and gets the raw-buffer and any-collection forms from here (one copy of them
/// for every parser in `Wire`).
public protocol IncrementalParser {
    /// What one feed answers (need more, a result, a refusal naming the RFC section).
    associatedtype Answer
    /// Feeds the next bytes of the stream (any length, including zero) and returns the answer.
    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) -> Answer
}

extension IncrementalParser {
    /// Feeds the next bytes of the stream (any length, including zero) and returns the answer.
    @inlinable
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Answer {
        feed(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Feeds the next bytes of the stream (any collection of bytes) and returns the answer; a
    /// collection without contiguous storage is copied once.
    @inlinable
    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) -> Answer where Bytes.Element == UInt8 {
        if let answer = bytes.withContiguousStorageIfAvailable({ buffer in feed(buffer) }) { return answer }
        return Array(bytes).withUnsafeBufferPointer { feed($0) }
    }
}

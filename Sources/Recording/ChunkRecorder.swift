/// What the proxy calls for every plaintext chunk it reads from either leg of one flow.
///
/// The contract for the caller (the live proxy):
/// - Check `isRecording` first (one relaxed atomic load); skip the call when false.
/// - `record` never blocks on disk or SQLite and never fails: when the recording queue is full
///   the chunk is dropped from the recording and counted.
/// - `offset` is µs since the flow's first byte; `bytes` is the plaintext of one read, valid for
///   the duration of the call only (what is kept is copied).
/// - Call `finish()` exactly once when the connection closes, whatever `isRecording` says: it
///   ends the open turn and releases the recorder.
public protocol ChunkRecorder: AnyObject, Sendable {
    /// False once nothing more of this flow will be kept (content switched off, both sides cut).
    var isRecording: Bool { get }
    /// One read from one leg.
    func record(_ direction: Direction, at offset: Int64, _ bytes: UnsafeRawBufferPointer)
    /// The connection closed.
    func finish()
}

extension ChunkRecorder {
    /// `record` for bytes held in an array.
    public func record(_ direction: Direction, at offset: Int64, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { record(direction, at: offset, $0) }
    }
}

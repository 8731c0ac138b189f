/// The seam for content recording: every plaintext chunk read from either leg.
///
/// The loop asks `isRecording` first (it must be cheap: an atomic load) and calls `record` only
/// when it is true, so nothing is copied while recording is off. `bytes` is valid only during the
/// call: copy what you keep. Called on a loop thread; never block.
public protocol ChunkRecorder: Sendable {
    var isRecording: Bool { get }
    /// - Parameters:
    ///   - flow: the flow id (as in `FlowFacts.id`).
    ///   - direction: which way the bytes went.
    ///   - offsetMicros: µs since the flow's first byte (its accept time).
    ///   - bytes: the plaintext, valid during the call only.
    func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer)
    /// The flow is over; nothing more will come for it.
    func flowEnded(flow: UInt64)
}

extension ChunkRecorder {
    /// Nothing to forget by default.
    public func flowEnded(flow: UInt64) {}
}

/// Receives flow facts from the event loops.
///
/// Called on a loop thread: an implementation must return at once (enqueue, never write to disk
/// or wait on a lock someone holds for long), or every connection on that loop waits.
public protocol FlowSink: Sendable {
    /// A connection was accepted (or a plain-HTTP upstream opened); `facts.id` is new.
    func flowOpened(_ facts: FlowFacts)
    /// Something worth saving changed: the destination is known, a handshake finished, the status
    /// was decided.
    func flowUpdated(_ facts: FlowFacts)
    /// The flow is over; the facts are final (bytes, duration, status, error).
    func flowClosed(_ facts: FlowFacts)
}

/// Which way a chunk travelled.
public enum ChunkDirection: UInt8, Sendable, Hashable {
    /// Read from the client, sent to the server.
    case clientToServer = 0
    /// Read from the server, sent to the client.
    case serverToClient = 1
}

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
    func record(flow: UInt64, direction: ChunkDirection, offsetMicros: Int64, bytes: UnsafeRawBufferPointer)
    /// The flow is over; nothing more will come for it.
    func flowEnded(flow: UInt64)
}

extension ChunkRecorder {
    public func flowEnded(flow: UInt64) {}
}

/// A loop thread's own door into a `ChunkRecorder` (issue 21: no lock per chunk on the loop
/// thread): the loop's chunks and flow ends, in the order they happen, and once per turn of its
/// event loop `loopTurnEnded()`, where a recorder that gathers hands on what it gathered.
///
/// Made once per loop thread by `ChunkRecorder.loopRecorder()` and confined to that thread.
/// Every chunk and every flow end of the flows that loop serves go through it (never around it
/// through the shared `ChunkRecorder`), so that a flow's end never overtakes its chunks.
public protocol LoopChunkRecorder: AnyObject {
    /// One plaintext read (as `ChunkRecorder.record`); `bytes` is valid during the call only.
    /// The caller asked the shared recorder's `isRecording` first.
    func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer)
    /// The flow is over (as `ChunkRecorder.flowEnded(flow:cutOff:)`).
    func flowEnded(flow: UInt64, cutOff: Bool)
    /// The loop finished a turn (its events, timers and extra turns), or stopped: hand on what
    /// was gathered. Called on the loop's thread only.
    func loopTurnEnded()
}

/// The loop recorder of a `ChunkRecorder` that gathers nothing: each call goes straight to it.
public final class DirectLoopRecorder: LoopChunkRecorder {
    /// The recorder every call goes to.
    public let recorder: any ChunkRecorder

    public init(_ recorder: any ChunkRecorder) { self.recorder = recorder }

    public func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) {
        recorder.record(flow: flow, direction: direction, offsetMicros: offsetMicros, bytes: bytes)
    }

    public func flowEnded(flow: UInt64, cutOff: Bool) { recorder.flowEnded(flow: flow, cutOff: cutOff) }

    public func loopTurnEnded() {}
}

/// `ChunkRecorderPair`'s loop recorder: each of the two gets a chunk only while it records.
final class LoopChunkRecorderPair: LoopChunkRecorder {
    private let pair: ChunkRecorderPair
    private let first: any LoopChunkRecorder
    private let second: any LoopChunkRecorder

    init(_ pair: ChunkRecorderPair) {
        self.pair = pair
        first = pair.first.loopRecorder()
        second = pair.second.loopRecorder()
    }

    func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) {
        if pair.first.isRecording { first.record(flow: flow, direction: direction, offsetMicros: offsetMicros, bytes: bytes) }
        if pair.second.isRecording { second.record(flow: flow, direction: direction, offsetMicros: offsetMicros, bytes: bytes) }
    }

    func flowEnded(flow: UInt64, cutOff: Bool) {
        first.flowEnded(flow: flow, cutOff: cutOff)
        second.flowEnded(flow: flow, cutOff: cutOff)
    }

    func loopTurnEnded() {
        first.loopTurnEnded()
        second.loopTurnEnded()
    }
}

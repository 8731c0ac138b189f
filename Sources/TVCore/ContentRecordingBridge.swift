import Proxy
import Recording
import Synchronization

/// The proxy's recorder seam into content recording: each flow gets its own `FlowContentRecorder`
/// at its first plaintext chunk (when content is kept then) and hands it every later chunk.
///
/// `isRecording` is one atomic load, so while content is off the loops copy nothing. While on,
/// a chunk costs one uncontended lock to find its flow's recorder.
public final class ContentRecordingBridge: Proxy.ChunkRecorder {
    private let content: ContentRecorder
    private let flows = Mutex<[UInt64: FlowContentRecorder]>([:])

    public init(content: ContentRecorder) { self.content = content }

    public var isRecording: Bool { content.isKeeping }

    public func record(flow: UInt64, direction: ChunkDirection, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) {
        let recorder: FlowContentRecorder? = flows.withLock { map in
            if let existing = map[flow] { return existing }
            guard let made = content.recorder(flow: Int64(flow)) else { return nil }
            map[flow] = made
            return made
        }
        recorder?.record(direction == .clientToServer ? .clientToServer : .serverToClient, at: offsetMicros, bytes)
    }

    public func flowEnded(flow: UInt64) {
        let recorder = flows.withLock { $0.removeValue(forKey: flow) }
        recorder?.finish()
    }
}

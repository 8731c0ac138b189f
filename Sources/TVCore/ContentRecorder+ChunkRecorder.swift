import Proxy
import Recording

/// The proxy's recorder seam is the session's `ContentRecorder` itself: its one map from flow id
/// to `FlowContentRecorder` serves the proxy's chunks. The conformance lives here because Proxy
/// does not depend on Recording (nor Recording on Proxy); only the flow id's type and the
/// direction's name differ between the two.
extension ContentRecorder: Proxy.ChunkRecorder {
    public var isRecording: Bool { isKeeping }

    public func record(flow: UInt64, direction: ChunkDirection, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) {
        record(flow: Int64(flow), direction == .clientToServer ? .clientToServer : .serverToClient, at: offsetMicros, bytes)
    }

    public func flowEnded(flow: UInt64) {
        flowEnded(flow: Int64(flow))
    }
}

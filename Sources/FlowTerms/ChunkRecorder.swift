/// The seam for content recording: every plaintext chunk read from either leg.
///
/// The loop asks `isRecording` first (it must be cheap: an atomic load) and calls `record` only
/// when it is true, so nothing is copied while recording is off. `bytes` is valid only during the
/// call: copy what you keep. Called on a loop thread; never block.
public protocol ChunkRecorder: Sendable {
    var isRecording: Bool { get }
    /// Whether what it records now is kept as the flows' content (turns, `content.keep`): the
    /// request rows keep query strings only then, for a query string is content. A recorder that
    /// records without keeping content (the decrypted capture) says false.
    var keepsContent: Bool { get }
    /// - Parameters:
    ///   - flow: the flow id (as in `FlowFacts.id`).
    ///   - direction: which way the bytes went.
    ///   - offsetMicros: µs since the flow's first byte (its accept time).
    ///   - bytes: the plaintext, valid during the call only.
    /// - Returns: false when nothing more of this flow will be recorded (content keeping is past
    ///   the flow's budget on both sides, or stopped for it): the caller may stop calling for
    ///   the flow. True otherwise, and whenever in doubt.
    @discardableResult
    func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) -> Bool
    /// The flow is over; nothing more will come for it.
    func flowEnded(flow: UInt64)
    /// An inspected flow's decrypted relay begins (both TLS legs are up), before its first
    /// chunk: its two ends as the flow records them, for a recorder that rebuilds the
    /// connection's packets (the decrypted capture). Not called for plain relays.
    /// - Parameters:
    ///   - startMicros: the flow's accept time, wall clock µs since the epoch (what
    ///     `offsetMicros` counts from).
    func inspectedFlowBegan(flow: UInt64, client: FlowEnds.End, server: FlowEnds.End, startMicros: Int64)
    /// The flow is over, and how (`StreamEnd`: who closed first, or who reset). The driver
    /// calls this one; its default calls `flowEnded(flow:)`.
    func flowEnded(flow: UInt64, end: StreamEnd)
    /// Flow `flow`'s own recorder, for a caller that hands it every chunk of the flow from then
    /// on instead of calling `record(flow:…)` (which finds it by id for each chunk). Asked at the
    /// flow's first chunk, while `isRecording`; the flow still ends through `flowEnded`.
    /// - Returns: nil when this recorder has none to give (the default): the caller goes on
    ///   with `record(flow:…)` for every chunk.
    func flowRecorder(flow: UInt64) -> (any FlowChunkRecorder)?
}

/// One flow's end of a `ChunkRecorder` (`ChunkRecorder.flowRecorder(flow:)`): held by the
/// connection so a chunk needs no lookup by flow id (in the h1 1 KiB row that lookup, a lock
/// and a hashed find, was ~190 instructions a chunk, two chunks a request; callgrind).
/// Called on a loop thread; never blocks.
public protocol FlowChunkRecorder: AnyObject, Sendable {
    /// `ChunkRecorder.record(flow:direction:offsetMicros:bytes:)` for this flow: the same
    /// arguments and the same answer (false once nothing more of the flow will be recorded).
    func record(direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) -> Bool
}

extension ChunkRecorder {
    /// No content kept by default.
    public var keepsContent: Bool { false }
    /// Nothing to forget by default.
    public func flowEnded(flow: UInt64) {}
    /// Nothing to rebuild by default.
    public func inspectedFlowBegan(flow: UInt64, client: FlowEnds.End, server: FlowEnds.End, startMicros: Int64) {}
    /// How the flow ended does not matter by default.
    public func flowEnded(flow: UInt64, end: StreamEnd) { flowEnded(flow: flow) }
    /// No flow's own recorder by default: every chunk through `record(flow:…)`.
    public func flowRecorder(flow: UInt64) -> (any FlowChunkRecorder)? { nil }
}

/// The two ends of a flow as text, for seams below the layer that knows addresses as values.
public enum FlowEnds {
    /// An address as `inet_ntop(3)` writes it (`127.0.0.1`, `::1`) and a port.
    public struct End: Sendable, Equatable {
        public var address: String
        public var port: UInt16
        public init(address: String, port: UInt16) {
            self.address = address
            self.port = port
        }
    }
}

/// Two recorders fed as one (content recording and the decrypted capture): recording while
/// either is; each gets a chunk only while it records. It gives no flow recorder
/// (`flowRecorder(flow:)` is nil): its chunks go through `record(flow:…)`.
public struct ChunkRecorderPair: ChunkRecorder {
    public let first: any ChunkRecorder
    public let second: any ChunkRecorder

    public init(_ first: any ChunkRecorder, _ second: any ChunkRecorder) {
        self.first = first
        self.second = second
    }

    public var isRecording: Bool { first.isRecording || second.isRecording }
    public var keepsContent: Bool { first.keepsContent || second.keepsContent }

    /// False only when both said false (one not recording now may start).
    @discardableResult
    public func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) -> Bool {
        var wanted = false
        if !first.isRecording || first.record(flow: flow, direction: direction, offsetMicros: offsetMicros, bytes: bytes) { wanted = true }
        if !second.isRecording || second.record(flow: flow, direction: direction, offsetMicros: offsetMicros, bytes: bytes) { wanted = true }
        return wanted
    }

    public func flowEnded(flow: UInt64) {
        first.flowEnded(flow: flow)
        second.flowEnded(flow: flow)
    }

    public func inspectedFlowBegan(flow: UInt64, client: FlowEnds.End, server: FlowEnds.End, startMicros: Int64) {
        first.inspectedFlowBegan(flow: flow, client: client, server: server, startMicros: startMicros)
        second.inspectedFlowBegan(flow: flow, client: client, server: server, startMicros: startMicros)
    }

    public func flowEnded(flow: UInt64, end: StreamEnd) {
        first.flowEnded(flow: flow, end: end)
        second.flowEnded(flow: flow, end: end)
    }
}

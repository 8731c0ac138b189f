/// The seam for packet capture: every IP packet a TUN front-end reads from or writes to a
/// program, with the flow it belongs to.
///
/// The engine asks `isCapturing` first (cheap: an atomic load) and calls `record` only when it
/// is true. `packet` is valid only during the call: the recorder copies what it keeps (at most
/// its snap length). Called on the engine thread; never blocks (a full queue drops and counts).
public protocol PacketRecorder: Sendable {
    var isCapturing: Bool { get }
    /// - Parameters:
    ///   - flow: the flow id (as in `FlowFacts.id`); 0 for a packet of no flow (never listed).
    ///   - direction: `.clientToServer` for what the program sent, `.serverToClient` for what
    ///     it received.
    ///   - timeMicros: wall-clock µs since the epoch (`EngineClock.wallMicros`).
    ///   - packet: the whole IP packet (IPv4 or IPv6 header first), valid during the call only.
    func record(flow: UInt64, direction: Direction, timeMicros: Int64, packet: UnsafeRawBufferPointer)
    /// `record` with a comment kept beside the packet (pcapng opt_comment): what the packet is
    /// when it is not what travelled elsewhere (the ICMP errors tv writes for a program,
    /// `ICMPErrorNote`).
    /// - Returns: false when the packet was dropped (a full queue, counted).
    @discardableResult
    func record(flow: UInt64, direction: Direction, timeMicros: Int64, packet: UnsafeRawBufferPointer, comment: String) -> Bool
}

/// The transport a flow rides on. Stored as the raw value.
public enum FlowTransport: String, Sendable, Equatable, CaseIterable {
    /// A TCP connection.
    case tcp
    /// A UDP association (e.g. QUIC, DNS), keyed by its five-tuple.
    case udp
}

/// The transport a flow rides on: TCP from the proxy engine, UDP from the TUN front-end. Stored in
/// the flow database as the raw value.
public enum FlowTransport: String, Sendable, Hashable, CaseIterable {
    /// A TCP connection.
    case tcp
    /// A UDP association (e.g. QUIC, DNS), keyed by its five-tuple.
    case udp
}

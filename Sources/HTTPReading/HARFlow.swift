import FlowTerms

/// One flow for a HAR export: the facts HAR wants about the connection, and what was said on
/// it: its kept conversation, or (when no content was kept) its exchange rows.
public struct HARFlow: Sendable {
    /// The flow's id (HAR `connection`).
    public var id: Int64
    /// When the flow began, µs since the epoch (entry times are this plus the message offsets).
    public var startTime: Int64
    /// `https` for an inspected TLS flow, `http` for a plain one.
    public var scheme: String
    /// The server's name when known (SNI, CONNECT), used when a request names no host.
    public var host: String?
    /// The server's IP address (HAR `serverIPAddress`).
    public var serverAddress: String
    /// The server's port.
    public var serverPort: Int
    /// The flow's turns read as HTTP (empty when no content was kept).
    public var conversation: HTTPConversation
    /// The flow's exchange rows, written as entries when its content was not kept
    /// (`HARRowEntry`); empty when `conversation` is what is written.
    public var rows: [ExchangeRecord]

    public init(id: Int64, startTime: Int64, scheme: String, host: String?, serverAddress: String, serverPort: Int,
                conversation: HTTPConversation, rows: [ExchangeRecord] = []) {
        self.id = id
        self.startTime = startTime
        self.scheme = scheme
        self.host = host
        self.serverAddress = serverAddress
        self.serverPort = serverPort
        self.conversation = conversation
        self.rows = rows
    }

    /// The authority a request that named none is sent to: the flow's name (else its server
    /// address) and its port unless it is `scheme`'s default.
    func authority(scheme: String) -> String {
        let defaultPort = (scheme == "https" && serverPort == 443) || (scheme == "http" && serverPort == 80)
        return (host ?? serverAddress) + (defaultPort ? "" : ":\(serverPort)")
    }
}

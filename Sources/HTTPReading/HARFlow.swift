/// One flow for a HAR export: the facts HAR wants about the connection, and its conversation.
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
    /// The flow's turns read as HTTP.
    public var conversation: HTTPConversation

    public init(id: Int64, startTime: Int64, scheme: String, host: String?, serverAddress: String, serverPort: Int,
                conversation: HTTPConversation) {
        self.id = id
        self.startTime = startTime
        self.scheme = scheme
        self.host = host
        self.serverAddress = serverAddress
        self.serverPort = serverPort
        self.conversation = conversation
    }
}

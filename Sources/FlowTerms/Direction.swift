/// Which leg a chunk was read from, and so which way its bytes were going.
///
/// Stored in the turns index as the raw value. The command line writes it as
/// "→ client to server" and "← server to client" everywhere.
public enum Direction: String, Sendable, Equatable, Hashable, CaseIterable {
    /// Read from the client leg: bytes the client sent towards the server ("up").
    case clientToServer = "client_to_server"
    /// Read from the server leg: bytes the server sent towards the client ("down").
    case serverToClient = "server_to_client"

    /// The other direction.
    @inlinable
    public var opposite: Direction {
        self == .clientToServer ? .serverToClient : .clientToServer
    }

    /// 0 for client → server, 1 for server → client (for per-side arrays).
    @inlinable
    public var index: Int { self == .clientToServer ? 0 : 1 }
}

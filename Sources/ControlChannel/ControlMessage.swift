/// A request to a live `tv run` session over its control socket, one JSON object per line.
public struct ControlRequest: Codable, Sendable, Equatable {
    /// `status`, `stop`, `set-inspection`, or another command a later issue adds.
    public var command: String
    /// Arguments by name (e.g. `enabled` = `true` for `set-inspection`).
    public var arguments: [String: String]

    public init(command: String, arguments: [String: String] = [:]) {
        self.command = command
        self.arguments = arguments
    }
}

/// The session's answer: ok or not, one sentence, and named values (counters, addresses).
public struct ControlResponse: Codable, Sendable, Equatable {
    public var ok: Bool
    /// One sentence for people (the error when `ok` is false).
    public var message: String
    /// Named values, e.g. `openConnections` = `"3"`.
    public var values: [String: String]

    public init(ok: Bool, message: String, values: [String: String] = [:]) {
        self.ok = ok
        self.message = message
        self.values = values
    }
}

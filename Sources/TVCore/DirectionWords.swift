import Recording
import FlowTerms

/// How the command line writes a direction, everywhere: the arrow and the words.
public enum DirectionWords {
    /// `→ client to server` or `← server to client`.
    public static func label(_ direction: Direction) -> String {
        direction == .clientToServer ? "→ client to server" : "← server to client"
    }

    /// `client to server` or `server to client`, for sentences.
    public static func words(_ direction: Direction) -> String {
        direction == .clientToServer ? "client to server" : "server to client"
    }
}

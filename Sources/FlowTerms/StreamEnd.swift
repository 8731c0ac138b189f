/// How an inspected flow's connection ended, as far as the decrypted capture draws it (its
/// rebuilt TCP stream ends the same way): which side closed first, or which side reset.
public enum StreamEnd: Sendable, Equatable {
    /// Both sides closed in order (FIN); `firstFrom` is the way the first FIN went
    /// (`.clientToServer`: the client closed first).
    case closed(firstFrom: Direction)
    /// Cut off: a reset sent `from` one side (`.clientToServer`: the client reset, or tv could
    /// no longer send to it because it had).
    case reset(from: Direction)

    /// Closed in order, the client first: what a flow still open when its session ends is given.
    public static let closedByClient = StreamEnd.closed(firstFrom: .clientToServer)
}

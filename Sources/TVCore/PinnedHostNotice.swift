/// What a running session says when a host becomes kept private (pinning memory, DESIGN.md:
/// "a client that refuses our leaf is remembered and passed through untouched afterwards").
///
/// The commonest refusal while setting up is not pinning but a client that was never given
/// tv's root (curl without `--cacert`, a program with its own CA bundle), so the sentence says
/// how to undo it as well as what happens.
public enum PinnedHostNotice {
    /// One sentence, e.g. "localhost is kept private from now on (the client rejected tv's
    /// certificate (alert unknown_ca)): tv passes it through unread. If that client only lacked
    /// tv's root, give it the root, then `tv pinned forget localhost`."
    /// - Parameters:
    ///   - host: the host as remembered (lower case, no trailing dot).
    ///   - reason: the flow's reason for the refusal (`PinningDetector.Verdict.reason`).
    public static func sentence(host: String, reason: String) -> String {
        "\(host) is kept private from now on (\(reason)): tv passes it through unread. "
            + "If that client only lacked tv's root, give it the root, then `tv pinned forget \(host)`."
    }
}

import FlowTerms
import Proxy

/// What a running session says when it starts passing a client's connections to a host through
/// unread (pinning memory, DESIGN.md: "a client that refuses our leaf is remembered and passed
/// through untouched afterwards"): which client, which host and port, why, and the way back.
public enum PinnedHostNotice {
    /// One sentence, e.g. "127.0.0.1 (hello 1a2b3c4d5e6f) lacks tv's root for a.test:443: its
    /// connections there pass through unread from now on; give it the root (`tv ca export`; curl:
    /// …), then `tv pinned forget a.test`." (the reason, which only says the root was refused, is
    /// left out of it; the way to give the root is said once).
    /// - Parameters:
    ///   - key: the client, host and port remembered.
    ///   - kind: what was remembered.
    ///   - reason: why (`ConnectionFailure.lacksRootCause`, or the possible pinning's sentence).
    public static func sentence(key: PinKey, kind: PinKind, reason: String) -> String {
        switch kind {
        case .lacksRoot:
            return "\(key.client) lacks tv's root for \(key.target): its connections there pass through unread from now on; "
                + "\(ConnectionFailure.rootAdvice), then `tv pinned forget \(key.host)`."
        case .pinned:
            return "\(key.client) pins its certificate for \(key.target), or checks it only after the handshake and lacks tv's root (curl built with GnuTLS does): its connections there pass through unread from now on "
                + "(\(reason)). `tv pinned forget \(key.host)` tries inspecting again."
        }
    }
}

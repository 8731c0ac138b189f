/// When a TLS leg may give its record buffers back to the allocator (`SSL_free_buffers`).
///
/// OpenSSL allocates a leg's read buffer (here 4 records, ~66 KiB, for read-ahead) *before* the
/// read that ends in "want read", and keeps it; with `SSL_MODE_RELEASE_BUFFERS` it frees it only
/// after consuming application data that emptied it, not after a handshake message (a
/// NewSessionTicket), an alert or an EAGAIN. An idle connection then holds up to two such buffers
/// (~13 KiB per connection on average under massif's timing, ~1.5 KiB in the harness's idle
/// row). The connection asks this policy once its relay has been quiet for `quietNanos`, and
/// frees when nothing is in flight: the next read allocates again, as OpenSSL would after any
/// drained application record. Not after every burst: `SSL_free_buffers` costs about a thousand
/// instructions even when there is nothing to free.
enum IdleBufferPolicy {
    /// How long a relay must have moved no byte before its legs' buffers are released: 1 s.
    static let quietNanos: UInt64 = 1_000_000_000

    /// What the relay knows about one TLS leg when it stops.
    struct LegState: Equatable, Sendable {
        /// The last epoll edge said readable and no read has said EAGAIN since: more is coming now.
        var readable: Bool
        /// OpenSSL holds decrypted plaintext or unread records (`SSL_has_pending`).
        var tlsPending: Bool
        /// Bytes of records written by OpenSSL that wait in the gathering BIO (not yet sent).
        var unsentRecords: Int
        /// Plaintext the leg's `SSL_write` has not taken yet (stashed by the relay).
        var stashedPlaintext: Bool
        /// The leg's TLS session is closed for reading (close_notify or EOF seen).
        var readClosed: Bool
    }

    /// True when the leg's buffers can go: no byte moved for `quietNanos` (`quietFor`, ns), the
    /// leg has nothing decrypted or half-read inside OpenSSL, and nothing of its own is waiting
    /// to be written (a blocked write keeps OpenSSL's write buffer; `SSL_free_buffers` would
    /// refuse anyway).
    static func release(_ leg: LegState, quietFor nanos: UInt64) -> Bool {
        if nanos < quietNanos { return false }
        if leg.tlsPending || leg.stashedPlaintext || leg.unsentRecords > 0 { return false }
        return !leg.readable || leg.readClosed
    }

    /// When the quiet timer should next try to release (monotonic ns): `quietNanos` after the
    /// last byte moved, and, after a try that a leg refused (`refusedAt`, 0 when none since the
    /// last activity), `quietNanos` after that try, so a leg that was busy inside OpenSSL at the
    /// first try is tried again while the connection stays idle (not only after new traffic),
    /// once a second and never in a loop.
    static func attemptAt(lastActivity: UInt64, refusedAt: UInt64) -> UInt64 {
        let afterQuiet = lastActivity &+ quietNanos
        guard refusedAt != 0 else { return afterQuiet }
        return max(afterQuiet, refusedAt &+ quietNanos)
    }
}

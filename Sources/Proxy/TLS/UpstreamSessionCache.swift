import COpenSSL
import Synchronization

/// TLS sessions of upstream servers, per `host:port` + SNI, so that a new upstream leg resumes
/// (one less certificate chain to verify, for us and for the origin).
///
/// Touched only at handshakes, never on the data path; one small lock.
final class UpstreamSessionCache: Sendable {
    /// `@unchecked Sendable`: an `SSL_SESSION` is reference-counted with atomic counts and is not
    /// modified once established; OpenSSL lets several SSL objects on several threads resume from
    /// the same session (`SSL_set_session` takes its own reference). Freed in `deinit` only.
    final class Session: @unchecked Sendable {
        let handle: OpaquePointer
        init(owning handle: OpaquePointer) { self.handle = handle }
        deinit { SSL_SESSION_free(handle) }
    }

    private struct State {
        var sessions: [String: Session] = [:]
        var order: [String] = []
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int = 2048) { self.capacity = capacity }

    func session(for key: String) -> Session? {
        state.withLock { $0.sessions[key] }
    }

    /// Stores a session (taking ownership of one reference).
    func store(_ handle: OpaquePointer, for key: String) {
        let session = Session(owning: handle)
        let evicted: Session? = state.withLock { s in
            var out: Session?
            if s.sessions[key] == nil {
                s.order.append(key)
                if s.order.count > capacity {
                    let old = s.order.removeFirst()
                    out = s.sessions.removeValue(forKey: old)
                }
            }
            s.sessions[key] = session
            return out
        }
        _ = evicted // freed outside the lock
    }

    func remove(_ key: String) {
        let gone = state.withLock { $0.sessions.removeValue(forKey: key) }
        _ = gone
    }

    /// Forgets every session (they are freed outside the lock).
    func removeAll() {
        let gone = state.withLock { s -> [String: Session] in
            let all = s.sessions
            s = State()
            return all
        }
        _ = gone
    }
}

import Synchronization

/// The hosts whose clients refused tv's certificate, remembered so that later connections pass
/// through untouched ("kept private"). The lead persists it; the engine asks it on every TLS
/// connection (keep `isPinned` fast: an in-memory set) and tells it from a loop thread (never
/// block in `remember`: enqueue the write).
public protocol PinningMemory: Sendable {
    func isPinned(_ host: String) -> Bool
    func remember(_ host: String, reason: String)
}

/// A pinning memory that lives only as long as the process (tests; sessions without a data folder).
public final class InMemoryPinningMemory: PinningMemory {
    private let hosts = Mutex<[String: String]>([:])

    public init(_ initial: [String: String] = [:]) { hosts.withLock { $0 = initial } }

    public func isPinned(_ host: String) -> Bool { hosts.withLock { $0[host] != nil } }
    public func remember(_ host: String, reason: String) { hosts.withLock { $0[host] = reason } }
    public func forget(_ host: String) { _ = hosts.withLock { $0.removeValue(forKey: host) } }
    /// host → reason, as remembered.
    public var all: [String: String] { hosts.withLock { $0 } }
}

import FlowTerms
import Synchronization

/// What pinning memory recalls for a connection about to be decided.
public enum PinningRecall: Sendable, Hashable {
    /// This client was remembered for this host and port (`PinKind`).
    case remembered(PinKind)
    /// An older tv remembered the host as pinned for every client and port (before pins were
    /// keyed by client); honoured until `tv pinned forget HOST`.
    case hostWide
    /// This client closed quietly right after tv's handshake last time (`PinningEvidenceRule`):
    /// this connection is its retry; it is passed through and the key remembered as pinned.
    case retry
}

/// The clients that refused tv's certificate for a host and port (`PinKey`), remembered so that
/// their later connections there pass through untouched ("kept private"). The lead persists it;
/// the engine asks it on every TLS connection (keep `recall` fast: in memory) and tells it from a
/// loop thread (never block in `remember`: enqueue the write).
public protocol PinningMemory: Sendable {
    /// What is remembered for `key` (`.remembered` or `.hostWide`), nil when nothing is.
    func recall(_ key: PinKey) -> PinningRecall?
    /// Remembers `key` as `kind`; `reason` is the flow's sentence, kept for `tv pinned`.
    func remember(_ key: PinKey, kind: PinKind, reason: String)
    /// Whether this memory learns at all (false: `--no-pinning-detection`, so not even a retry
    /// after a quiet close is passed through).
    var learns: Bool { get }
}

extension PinningMemory {
    public var learns: Bool { true }
}

/// A pinning memory that lives only as long as the process (tests; sessions without a data folder).
public final class InMemoryPinningMemory: PinningMemory {
    private let keys = Mutex<[PinKey: (kind: PinKind, reason: String)]>([:])

    public init() {}

    public func recall(_ key: PinKey) -> PinningRecall? { keys.withLock { $0[key] }.map { .remembered($0.kind) } }
    public func remember(_ key: PinKey, kind: PinKind, reason: String) { keys.withLock { $0[key] = (kind, reason) } }
    /// Forgets every key for `host`.
    public func forget(host: String) {
        let name = PinKey.normalize(host)
        keys.withLock { all in all = all.filter { $0.key.host != name } }
    }
    /// key → kind, as remembered.
    public var all: [PinKey: PinKind] { keys.withLock { $0.mapValues(\.kind) } }
}

import Foundation
import FlowStore
import Proxy
import Synchronization

/// Pinned hosts for a live session: answered from memory (the loops ask on every new TLS
/// connection), remembered in memory at once and written to the flow database in the background,
/// so a pinning client never makes a loop wait on SQLite.
public final class PersistentPinningMemory: PinningMemory {
    private let hosts: Mutex<Set<String>>
    private let store: PinnedHosts
    private let queue = DispatchQueue(label: "tv.pinned-hosts")

    /// Called once per host, on the event loop that saw the refusal, when a host becomes kept
    /// private (host as normalized, the flow's reason); nil: nothing is said.
    private let announce: (@Sendable (String, String) -> Void)?

    /// Loads the pinned hosts the database already has.
    /// - Parameter announce: told (host, reason) when a host is newly remembered.
    /// - Throws: `FlowStoreError` when they cannot be read.
    public init(store: PinnedHosts, announce: (@Sendable (String, String) -> Void)? = nil) throws {
        self.store = store
        self.announce = announce
        hosts = Mutex(Set(try store.list().map(\.host)))
    }

    public func isPinned(_ host: String) -> Bool {
        let key = PinnedHosts.normalize(host)
        return hosts.withLock { $0.contains(key) }
    }

    public func remember(_ host: String, reason: String) {
        let key = PinnedHosts.normalize(host)
        let isNew = hosts.withLock { $0.insert(key).inserted }
        if isNew { announce?(key, reason) }
        let store = self.store
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        queue.async { try? store.remember(key, reason: reason, at: now) }
    }

    /// Forgets `host` in memory (the database row is removed by `tv pinned forget`).
    public func forget(_ host: String) {
        let key = PinnedHosts.normalize(host)
        hosts.withLock { _ = $0.remove(key) }
    }

    /// Waits until every background write is done.
    public func flush() { queue.sync {} }
}

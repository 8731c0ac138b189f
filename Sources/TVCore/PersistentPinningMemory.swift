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

    /// Loads the pinned hosts the database already has.
    /// - Throws: `FlowStoreError` when they cannot be read.
    public init(store: PinnedHosts) throws {
        self.store = store
        hosts = Mutex(Set(try store.list().map(\.host)))
    }

    public func isPinned(_ host: String) -> Bool {
        let key = PinnedHosts.normalize(host)
        return hosts.withLock { $0.contains(key) }
    }

    public func remember(_ host: String, reason: String) {
        let key = PinnedHosts.normalize(host)
        hosts.withLock { _ = $0.insert(key) }
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

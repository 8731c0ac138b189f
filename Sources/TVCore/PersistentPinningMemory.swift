import Foundation
import FlowStore
import FlowTerms
import Proxy
import Synchronization

/// Pinning memory for a live session: answered from memory (the loops ask on every new TLS
/// connection), remembered in memory at once and written to the flow database in the background,
/// so a refusing client never makes a loop wait on SQLite.
///
/// Keys are `PinKey`s (client, host, port: `client_pins`). Host-wide pins an older tv remembered
/// (`pinned_hosts`, before pins were keyed by client) are still honoured for every client and
/// port (`PinningRecall.hostWide`), until `tv pinned forget HOST`; nothing new is added to them.
public final class PersistentPinningMemory: PinningMemory {
    private struct State {
        var keys: [PinKey: PinKind] = [:]
        var hostWide: Set<String> = []
    }
    private let state: Mutex<State>
    private let store: FlowStore
    private let queue = DispatchQueue(label: "tv.pinned-hosts")

    /// Called once per key, on the event loop that saw the refusal, when a key becomes
    /// remembered as a kind (the key, the kind, the flow's reason); nil: nothing is said.
    private let announce: (@Sendable (PinKey, PinKind, String) -> Void)?

    /// Loads what the database already remembers.
    /// - Parameter announce: told (key, kind, reason) when a key is newly remembered as a kind.
    /// - Throws: `FlowStoreError` when they cannot be read.
    public init(store: FlowStore, announce: (@Sendable (PinKey, PinKind, String) -> Void)? = nil) throws {
        self.store = store
        self.announce = announce
        var loaded = State()
        for pin in try store.clientPins.list() {
            let key = PinKey(client: ClientIdentity(address: pin.clientAddress, helloFingerprint: pin.clientHello),
                             host: pin.host, port: pin.port)
            loaded.keys[key] = pin.kind
        }
        loaded.hostWide = Set(try store.pinnedHosts.list().map(\.host))
        state = Mutex(loaded)
    }

    public func recall(_ key: PinKey) -> PinningRecall? {
        state.withLock { state in
            if let kind = state.keys[key] { return .remembered(kind) }
            return state.hostWide.contains(key.host) ? .hostWide : nil
        }
    }

    public func remember(_ key: PinKey, kind: PinKind, reason: String) {
        let isNew = state.withLock { state in state.keys.updateValue(kind, forKey: key) != kind }
        if isNew { announce?(key, kind, reason) }
        let pins = store.clientPins
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        queue.async {
            try? pins.remember(clientAddress: key.client.address, clientHello: key.client.helloFingerprint,
                               host: key.host, port: key.port, kind: kind, reason: reason, at: now)
        }
    }

    /// Forgets everything about `host` in memory, every client, port and kind (the database rows
    /// are removed by `tv pinned forget`).
    public func forget(host: String) {
        let name = PinKey.normalize(host)
        state.withLock { state in
            state.keys = state.keys.filter { $0.key.host != name }
            state.hostWide.remove(name)
        }
    }

    /// Forgets every key remembered as `kind` in memory (the rows are removed by the command that
    /// changed the root: `LacksRootMemory`).
    public func forget(kind: PinKind) {
        state.withLock { state in state.keys = state.keys.filter { $0.value != kind } }
    }

    /// Forgets every client, host, port and kind in memory (`tv storage delete-everything`
    /// removed the rows).
    public func forgetAll() {
        state.withLock { state in
            state.keys = [:]
            state.hostWide.removeAll()
        }
    }

    /// Waits until every background write is done.
    public func flush() { queue.sync {} }
}

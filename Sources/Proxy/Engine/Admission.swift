import LocalCA
#if canImport(Glibc)
import Glibc
#endif

/// The loops' side of taking a connection in and letting it go: the connection cap, the
/// per-address limit (`ClientAddressLimit`) and the descriptor shortage, each counted and said
/// (`ProxyNotice`, throttled by `NoticeThrottle`). The decisions are the policies'; this only
/// holds their shared state and performs what they answer.
extension ProxyShared {
    /// What to do with an accepted connection.
    enum Admission: Equatable {
        /// Take it; `address` is what `connectionEnded` must release (nil: not limited per address).
        case admitted(address: IPAddress?)
        /// Refuse it: `connectionCap` are open.
        case refusedByCap
        /// Refuse it: its address holds the most it may.
        case refusedPerClient
    }

    /// Counts a new connection in against the cap and, when `address` is given, against that
    /// address's limit; counts and says a refusal.
    /// - Parameter now: monotonic ns (for the notices' interval).
    func admit(_ address: IPAddress?, now: UInt64) -> Admission {
        if openConnections.wrappingAdd(1, ordering: .relaxed).newValue > connectionCap {
            openConnections.wrappingSubtract(1, ordering: .relaxed)
            refusedByCap.wrappingAdd(1, ordering: .relaxed)
            if let said = capNotices.withLock({ $0.note(at: now) }) {
                let lowered = connectionCap < configuration.maxConnections ? descriptorLimit : nil
                configuration.notices?(.connectionCap(cap: connectionCap, descriptorLimit: lowered, refused: said))
            }
            return .refusedByCap
        }
        // Loopback is not counted per address (`ClientAddressLimit.counts`): no lock taken.
        guard let address, ClientAddressLimit.counts(address) else { return .admitted(address: nil) }
        switch clientAddresses.withLock({ $0.admit(address, now: now) }) {
        case .admitted:
            return .admitted(address: address)
        case .refused(let notice):
            openConnections.wrappingSubtract(1, ordering: .relaxed)
            refusedPerClient.wrappingAdd(1, ordering: .relaxed)
            if let notice {
                let limit = clientAddresses.withLock { $0.maximum }
                configuration.notices?(.clientAddressLimit(address: address.description, limit: limit, refused: notice))
            }
            return .refusedPerClient
        }
    }

    /// A front end dropped a program's SYN at the cap (`ProxyServer.synDroppedAtCap`): said at
    /// most once a minute, with how many since it was last said.
    func synDroppedAtCap(now: UInt64) {
        if let said = synCapNotices.withLock({ $0.note(at: now) }) {
            let lowered = connectionCap < configuration.maxConnections ? descriptorLimit : nil
            configuration.notices?(.synsDroppedAtCap(cap: connectionCap, descriptorLimit: lowered, dropped: said))
        }
    }

    /// An admitted connection closed: it no longer counts against the cap or its address.
    func connectionEnded(address: IPAddress?) {
        openConnections.wrappingSubtract(1, ordering: .relaxed)
        if let address { clientAddresses.withLock { $0.release(address) } }
    }

    /// Transparent mode: a connection from `peer` came with no original destination (it reached
    /// tv's port directly, no REDIRECT rule applied): counted, reset by the caller, and said (a
    /// trial saw only resets, no flow and nothing said: the sign of a rule that does not match).
    func notRedirected(from peer: String, now: UInt64) {
        notRedirected.wrappingAdd(1, ordering: .relaxed)
        if let said = notRedirectedNotices.withLock({ $0.note(at: now) }) {
            configuration.notices?(.notRedirected(lastFrom: peer, count: said))
        }
    }

    /// accept(2) failed with `err`; counts and says it when it was for lack of descriptors.
    func acceptFailed(_ err: Int32, now: UInt64) {
        guard err == EMFILE || err == ENFILE else { return }
        acceptsFailedForDescriptors.wrappingAdd(1, ordering: .relaxed)
        if let said = descriptorNotices.withLock({ $0.note(at: now) }) {
            // The limit now (it may have been lowered since start: prlimit --pid).
            configuration.notices?(.outOfDescriptors(systemWide: err == ENFILE, limit: DescriptorLimit.current().soft, failures: said))
        }
    }
}

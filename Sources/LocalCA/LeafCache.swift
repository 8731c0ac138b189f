import Synchronization

/// A thread-safe least-recently-used cache of minted leaves, keyed by identity and key type
/// (everything that changes the certificate: its names and its key).
///
/// The same identity gets the same leaf (clients may cache it; resumption stays valid) until the
/// leaf comes within a day of its end, when it is minted again. Default capacity 4,096 identities.
public final class LeafCache: Sendable {
    /// What a leaf is cached under.
    private struct Key: Hashable {
        var identity: LeafIdentity
        var keyType: KeyType
    }

    private struct Entry {
        var key: Key
        var leaf: Leaf
        var newer: Int?   // towards the most recently used
        var older: Int?   // towards the least recently used
    }

    private struct State {
        var slots: [Entry] = []
        var index: [Key: Int] = [:]
        var newest: Int?
        var oldest: Int?
        var hits = 0
        var misses = 0
    }

    private let state = Mutex(State())
    private let authority: CertificateAuthority
    /// The most leaves kept (one per identity and key type).
    public let capacity: Int

    public init(authority: CertificateAuthority, capacity: Int = 4096) {
        self.authority = authority
        self.capacity = max(1, capacity)
    }

    /// The leaf for `identity` with a key of `keyType` (nil: the CA's `leafKeyType`): cached, or
    /// minted now (outside the lock, so a slow mint never holds up another thread's cache hit).
    /// - Parameter now: seconds since 1970-01-01 UTC.
    /// - Throws: what `CertificateAuthority.mintLeaf` throws.
    public func leaf(for identity: LeafIdentity, keyType: KeyType? = nil, now: Int64) throws -> Leaf {
        let key = Key(identity: identity, keyType: keyType ?? authority.leafKeyType)
        let cached: Leaf? = state.withLock { s in
            guard let slot = s.index[key] else { s.misses += 1; return nil }
            let leaf = s.slots[slot].leaf
            guard leaf.certificate.notAfter - now > CertificateAuthority.day else { s.misses += 1; return nil }
            s.hits += 1
            Self.touch(&s, slot)
            return leaf
        }
        if let cached { return cached }
        let leaf = try authority.mintLeaf(for: identity, keyType: key.keyType, now: now)
        return state.withLock { s in Self.insert(&s, key, leaf, now: now, capacity: capacity) }
    }

    /// (hits, misses, entries) since creation.
    public var statistics: (hits: Int, misses: Int, count: Int) {
        state.withLock { ($0.hits, $0.misses, $0.index.count) }
    }

    private static func unlink(_ s: inout State, _ slot: Int) {
        let e = s.slots[slot]
        if let n = e.newer { s.slots[n].older = e.older } else { s.newest = e.older }
        if let o = e.older { s.slots[o].newer = e.newer } else { s.oldest = e.newer }
        s.slots[slot].newer = nil
        s.slots[slot].older = nil
    }

    private static func pushNewest(_ s: inout State, _ slot: Int) {
        s.slots[slot].older = s.newest
        s.slots[slot].newer = nil
        if let n = s.newest { s.slots[n].newer = slot }
        s.newest = slot
        if s.oldest == nil { s.oldest = slot }
    }

    private static func touch(_ s: inout State, _ slot: Int) {
        guard s.newest != slot else { return }
        unlink(&s, slot)
        pushNewest(&s, slot)
    }

    /// Stores `leaf` and returns the leaf callers get: when another thread minted the same key
    /// meanwhile and its leaf is still fresh, that one stays and is returned, so concurrent first
    /// requests all get the same leaf.
    private static func insert(_ s: inout State, _ key: Key, _ leaf: Leaf, now: Int64, capacity: Int) -> Leaf {
        if let slot = s.index[key] {
            if s.slots[slot].leaf.certificate.notAfter - now <= CertificateAuthority.day {
                s.slots[slot].leaf = leaf
            }
            touch(&s, slot)
            return s.slots[slot].leaf
        }
        let slot: Int
        if s.slots.count < capacity {
            s.slots.append(Entry(key: key, leaf: leaf))
            slot = s.slots.count - 1
        } else {
            slot = s.oldest!
            unlink(&s, slot)
            s.index[s.slots[slot].key] = nil
            s.slots[slot] = Entry(key: key, leaf: leaf)
        }
        s.index[key] = slot
        pushNewest(&s, slot)
        return leaf
    }
}

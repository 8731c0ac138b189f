import Dispatch
import Synchronization
import Testing
@testable import LocalCA

/// The leaf cache the proxy calls per connection (issue 2: thread-safe LRU, default 4,096).
@Suite("LeafCache")
struct LeafCacheTests {
    @Test("the same identity gets the identical leaf, however it was spelled")
    func sameLeaf() throws {
        let now = currentTime()
        let cache = LeafCache(authority: try makeAuthority(now: now))
        #expect(cache.capacity == 4096)
        let first = try cache.leaf(for: try LeafIdentity(names: ["a.test", "127.0.0.1"]), now: now)
        let again = try cache.leaf(for: try LeafIdentity(names: ["A.TEST.", "a.test", "127.0.0.1"]), now: now + 3600)
        #expect(again.certificate === first.certificate)
        #expect(again.certificate.der == first.certificate.der)
        let other = try cache.leaf(for: try LeafIdentity(names: ["b.test"]), now: now)
        #expect(other.certificate !== first.certificate)
        // A different SAN set is a different identity, even sharing the first name.
        let wider = try cache.leaf(for: try LeafIdentity(names: ["a.test"]), now: now)
        #expect(wider.certificate !== first.certificate)
        let stats = cache.statistics
        #expect(stats.hits == 1)
        #expect(stats.misses == 3)
        #expect(stats.count == 3)
    }

    @Test("one identity, two key types: two leaves cached apart; the other algorithm's key is made once and shared")
    func keyTypes() throws {
        let now = currentTime()
        for (primary, other) in [(KeyType.ecdsaP256, KeyType.rsa2048), (.rsa2048, .ecdsaP256)] {
            let authority = try makeAuthority(leaf: primary, now: now)
            #expect(authority.leafKeyType == primary)
            let cache = LeafCache(authority: authority)
            let identity = try LeafIdentity(names: ["a.test", "127.0.0.1"])
            let own = try cache.leaf(for: identity, now: now)
            let ownAgain = try cache.leaf(for: identity, keyType: primary, now: now)
            let second = try cache.leaf(for: identity, keyType: other, now: now)
            let secondAgain = try cache.leaf(for: identity, keyType: other, now: now)
            let b = try cache.leaf(for: try LeafIdentity(names: ["b.test"]), keyType: other, now: now)
            #expect(own.certificate === ownAgain.certificate)
            #expect(own.key === authority.leafKey)
            #expect(secondAgain.certificate === second.certificate)
            #expect(second.certificate !== own.certificate)
            #expect(second.key.type == other)
            #expect(second.key.isRSA == other.isRSA)
            #expect(b.key === second.key, "one key per type, as for the CA's own")
            #expect(second.certificate.subjectAlternativeNames == own.certificate.subjectAlternativeNames)
            #expect(try authority.leafKey(primary) === authority.leafKey)
            let stats = cache.statistics
            #expect(stats.hits == 2)
            #expect(stats.misses == 3)
            #expect(stats.count == 3)
        }
    }

    @Test("at capacity the least recently used identity is evicted")
    func evictsLRU() throws {
        let now = currentTime()
        let cache = LeafCache(authority: try makeAuthority(now: now), capacity: 3)
        let names = ["a.test", "b.test", "c.test", "d.test"].map { try! LeafIdentity(names: [$0]) }
        let a = try cache.leaf(for: names[0], now: now)
        let b = try cache.leaf(for: names[1], now: now)
        let c = try cache.leaf(for: names[2], now: now)
        // Touch a: b is now the least recently used.
        #expect(try cache.leaf(for: names[0], now: now).certificate === a.certificate)
        _ = try cache.leaf(for: names[3], now: now)
        #expect(cache.statistics.count == 3)
        #expect(try cache.leaf(for: names[0], now: now).certificate === a.certificate)
        #expect(try cache.leaf(for: names[2], now: now).certificate === c.certificate)
        // b was evicted: it is minted again (a new serial), and that evicts d (now the oldest).
        let b2 = try cache.leaf(for: names[1], now: now)
        #expect(b2.certificate !== b.certificate)
        #expect(b2.certificate.serialBytes != b.certificate.serialBytes)
        #expect(cache.statistics.count == 3)
        #expect(try cache.leaf(for: names[0], now: now).certificate === a.certificate)
    }

    @Test("capacity 1 keeps only the last identity")
    func capacityOne() throws {
        let now = currentTime()
        let cache = LeafCache(authority: try makeAuthority(now: now), capacity: 0)  // clamped to 1
        #expect(cache.capacity == 1)
        let a = try cache.leaf(for: try LeafIdentity(names: ["a.test"]), now: now)
        _ = try cache.leaf(for: try LeafIdentity(names: ["b.test"]), now: now)
        #expect(try cache.leaf(for: try LeafIdentity(names: ["a.test"]), now: now).certificate !== a.certificate)
        #expect(cache.statistics.count == 1)
    }

    @Test("a leaf within a day of its end is minted again; one a second earlier is not")
    func remintsNearExpiry() throws {
        let now = currentTime()
        let cache = LeafCache(authority: try makeAuthority(now: now))
        let identity = try LeafIdentity(names: ["a.test"])
        let first = try cache.leaf(for: identity, now: now)
        let end = first.certificate.notAfter
        #expect(end == now + 197 * day)
        #expect(try cache.leaf(for: identity, now: end - day - 1).certificate === first.certificate)
        let renewed = try cache.leaf(for: identity, now: end - day)
        #expect(renewed.certificate !== first.certificate)
        #expect(renewed.certificate.notBefore == end - day - 2 * day)
        // The renewed leaf replaced the old one in the cache.
        #expect(try cache.leaf(for: identity, now: end - day).certificate === renewed.certificate)
        #expect(cache.statistics.count == 1)
    }

    @Test("many tasks asking at once for the same new identity all get the identical leaf")
    func concurrentFirstRequests() async throws {
        let now = currentTime()
        let cache = LeafCache(authority: try makeAuthority(now: now))
        for round in 0..<20 {
            let identity = try LeafIdentity(names: ["r\(round).test"])
            let serials = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for _ in 0..<32 {
                    group.addTask { try cache.leaf(for: identity, now: now).certificate.serialBytes }
                }
                var all: [[UInt8]] = []
                for try await serial in group { all.append(serial) }
                return all
            }
            #expect(Set(serials).count == 1, "round \(round): \(Set(serials).count) different leaves")
            #expect(try cache.leaf(for: identity, now: now).certificate.serialBytes == serials[0])
        }
    }

    @Test("many threads hammering a small cache: no crash, right leaf for every identity, size bounded")
    func concurrentThreads() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let cache = LeafCache(authority: ca, capacity: 16)
        let identities = try (0..<64).map { try LeafIdentity(names: ["h\($0).test", "10.0.0.\($0)"]) }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var rng = SystemRandomNumberGenerator()
            for _ in 0..<400 {
                let i = Int.random(in: 0..<identities.count, using: &rng)
                do {
                    let leaf = try cache.leaf(for: identities[i], now: now)
                    if leaf.certificate.subjectAlternativeNames != identities[i].subjectAlternativeNames {
                        failures.withLock { $0.append("worker \(worker): leaf for \(identities[i]) has \(leaf.certificate.subjectAlternativeNames)") }
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let stats = cache.statistics
        #expect(stats.count <= 16)
        #expect(stats.hits + stats.misses == 8 * 400)
        // After the storm, the cache still answers consistently.
        let settled = try cache.leaf(for: identities[0], now: now)
        #expect(try cache.leaf(for: identities[0], now: now).certificate === settled.certificate)
    }

    @Test("a warm cache gives every thread the identical leaf")
    func warmCacheAcrossThreads() throws {
        let now = currentTime()
        let cache = LeafCache(authority: try makeAuthority(now: now), capacity: 64)
        let identities = try (0..<32).map { try LeafIdentity(names: ["w\($0).test"]) }
        let expected = try identities.map { try cache.leaf(for: $0, now: now).certificate.der }
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for round in 0..<500 {
                let i = round % identities.count
                if (try? cache.leaf(for: identities[i], now: now).certificate.der) != expected[i] {
                    mismatches.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
        #expect(cache.statistics.misses == identities.count)
    }
}

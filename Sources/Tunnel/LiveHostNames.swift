/// The names the DNS answers carried by the tunnel gave each address, while they are live: an
/// answer's name is live for its TTL and `graceNanos` more (programs keep an answer a little past
/// its TTL, and a TTL of 0 still names the connection made right after it). Kept on the engine
/// thread, in memory, so a new flow is named without waiting on anything (the `host_names` table
/// is the durable record, written off the thread).
///
/// Bounded: at most `capacity` addresses and `namesPerAddress` names each; when full, expired
/// entries go first, then the addresses closest to expiring (counted in `evicted`).
struct LiveHostNames {
    struct Entry: Equatable {
        var name: String
        /// Monotonic ns after which the name is no longer live.
        var expires: UInt64
        /// Monotonic ns of the last answer that gave it.
        var seen: UInt64
        /// The name was the question's (what the program asked for), not a CNAME target.
        var asked: Bool
    }

    /// Names stay live this long past their TTL: 60 s.
    static let graceNanos: UInt64 = 60_000_000_000
    /// No name stays live longer than a day, whatever its TTL.
    static let maximumLifeNanos: UInt64 = 86_400_000_000_000

    let capacity: Int
    let namesPerAddress: Int
    private var byAddress: [PacketAddress: [Entry]] = [:]
    /// Addresses dropped while still live because the table was full.
    private(set) var evicted: UInt64 = 0

    init(capacity: Int = 16_384, namesPerAddress: Int = 16) {
        self.capacity = max(1, capacity)
        self.namesPerAddress = max(1, namesPerAddress)
    }

    /// Addresses held (live or not yet swept).
    var count: Int { byAddress.count }

    /// Takes one answer's names (`DNSMessage.resolvedAddresses`) seen at `now` (monotonic ns);
    /// `question` is the name the query asked, preferred among names of one answer.
    mutating func learn(_ answers: [DNSResolvedAddress], question: String?, now: UInt64) {
        for answer in answers {
            let life = min(UInt64(answer.ttl) * 1_000_000_000 + Self.graceNanos, Self.maximumLifeNanos)
            let entry = Entry(name: answer.name, expires: now &+ life, seen: now, asked: answer.name == question)
            var names = byAddress[answer.address] ?? []
            if names.isEmpty, byAddress.count >= capacity { makeRoom(now: now) }
            if let i = names.firstIndex(where: { $0.name == entry.name }) {
                names[i] = Entry(name: entry.name, expires: max(names[i].expires, entry.expires), seen: now, asked: entry.asked)
            } else {
                names.append(entry)
            }
            names.sort(by: Self.before)
            if names.count > namesPerAddress { names.removeLast(names.count - namesPerAddress) }
            byAddress[answer.address] = names
        }
    }

    /// The live names of `address`, the one to show first: most recently answered first, and of
    /// one answer the name asked for before its CNAME targets; empty when none is live.
    func names(for address: PacketAddress, now: UInt64) -> [String] {
        guard let names = byAddress[address] else { return [] }
        return names.filter { $0.expires > now }.map(\.name)
    }

    /// Drops every name that is no longer live (housekeeping).
    mutating func expire(now: UInt64) {
        for (address, names) in byAddress {
            let live = names.filter { $0.expires > now }
            if live.isEmpty { byAddress[address] = nil } else if live.count != names.count { byAddress[address] = live }
        }
    }

    /// Full: drops what has expired, then, if still full, the eighth of the addresses whose
    /// names expire soonest.
    private mutating func makeRoom(now: UInt64) {
        expire(now: now)
        guard byAddress.count >= capacity else { return }
        let doomed = byAddress.map { ($0.key, $0.value.map(\.expires).max() ?? 0) }
            .sorted { $0.1 < $1.1 }
            .prefix(max(1, capacity / 8))
        for (address, _) in doomed { byAddress[address] = nil }
        evicted &+= UInt64(doomed.count)
    }

    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        if a.seen != b.seen { return a.seen > b.seen }
        if a.asked != b.asked { return a.asked }
        return a.name < b.name
    }
}

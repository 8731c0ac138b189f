/// Something the engine tells the person running it, as it happens (`ProxyConfiguration.notices`;
/// `tv run` says `message` in its output). Each kind is said at most once per minute (per client
/// address for `clientAddressLimit`), with the number of times it happened since it was last said.
public enum ProxyNotice: Sendable, Equatable {
    /// Connections from `address` were refused because it already held `limit` (`tv run
    /// --max-per-client`); `refused` of them since the last notice about this address.
    case clientAddressLimit(address: String, limit: Int, refused: UInt64)
    /// Connections were refused because `cap` were open; `descriptorLimit` is the file-descriptor
    /// limit the cap was sized from when it lowered the configured cap (nil: the configured cap).
    case connectionCap(cap: Int, descriptorLimit: UInt64?, refused: UInt64)
    /// The TUN front-ends: `dropped` SYNs of programs were dropped, not answered, because `cap`
    /// connections were open or under way (`AdoptionRefusal.atConnectionCap`), as a server whose
    /// listen queue is full drops them, so the programs' kernels send them again;
    /// `descriptorLimit` as for `connectionCap`.
    case synsDroppedAtCap(cap: Int, descriptorLimit: UInt64?, dropped: UInt64)
    /// accept(2) failed `failures` times for lack of file descriptors (EMFILE: this process's
    /// `limit`; ENFILE: the whole system's), so clients waited in the listen queue; tv paused
    /// accepting for 100 ms each time rather than spin.
    case outOfDescriptors(systemWide: Bool, limit: UInt64, failures: UInt64)
    /// Transparent mode: `count` connections came to tv's port with no original destination (no
    /// REDIRECT rule applied to them) and were reset; the last from `lastFrom`.
    case notRedirected(lastFrom: String, count: UInt64)

    /// One sentence: what happened and what to do.
    public var message: String {
        switch self {
        case let .clientAddressLimit(address, limit, refused):
            return "refused \(Self.connections(refused)) from \(address), which already holds \(limit) (the most one client address may open; raise it with --max-per-client)"
        case let .connectionCap(cap, descriptorLimit, refused):
            let why = descriptorLimit.map { " (sized from the file-descriptor limit of \($0); raise it with ulimit -n)" } ?? ""
            return "refused \(Self.connections(refused)): \(cap) are open, the most tv takes at once\(why)"
        case let .synsDroppedAtCap(cap, descriptorLimit, dropped):
            let why = descriptorLimit.map { " (sized from the file-descriptor limit of \($0); raise it with ulimit -n)" } ?? ""
            let held = dropped == 1
                ? "a connection request (its SYN dropped, as a server whose listen queue is full drops it, so the program's kernel sends it again)"
                : "\(dropped) connection requests (SYNs dropped, as a server whose listen queue is full drops them, so the programs' kernels send them again)"
            return "held back \(held): \(cap) are open or being connected, the most tv takes at once\(why)"
        case let .outOfDescriptors(systemWide, limit, failures):
            let whose = systemWide ? "the system ran out of file descriptors (fs.file-max)" : "tv ran out of file descriptors (its limit is \(limit); raise it with ulimit -n)"
            return "could not accept \(Self.connections(failures)): \(whose); clients wait in the listen queue until some close"
        case let .notRedirected(last, count):
            return "reset \(Self.connections(count)) (the last from \(last)) that reached tv's port directly, without a REDIRECT rule's original destination: transparent mode serves only redirected connections; check that your rule matches them (tv's start lines show one)"
        }
    }

    private static func connections(_ n: UInt64) -> String { n == 1 ? "a connection" : "\(n) connections" }
}

/// File descriptors: the soft limit tv asks for at start and the number of connections that
/// limit allows (`ProxyServer.start` reads the limits and the descriptors already open, asks
/// this, and applies it).
///
/// What one proxied connection holds: the client's socket and the server's (2), and, once a
/// passed-through TLS direction has carried 256 KiB (`ProxyConnection.spliceAfterBytes`), a pipe
/// of two descriptors per spliced direction (up to 4 more). A pipe that cannot be opened falls
/// back to copying, so the budget counts 3 per connection: the two sockets and room for some
/// pipes. `reserve` keeps descriptors for everything else tv opens while it runs (the database
/// and its journal, content segments, name resolution, the control socket and its clients, the
/// key log, the loops' epoll and eventfd).
struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors counted per connection.
    static let perConnection = 3
    /// Descriptors kept for everything that is not a connection.
    static let reserve = 32
    /// The highest soft limit asked for: Linux's default `fs.nr_open` (a hard limit of
    /// "unlimited" cannot be the soft limit of RLIMIT_NOFILE).
    static let ceiling: UInt64 = 1 << 20

    /// The soft limit to set (the hard limit, as servers do: nginx's `worker_rlimit_nofile`,
    /// systemd's advice for programs that use epoll), or nil when it is already that high.
    static func raisedSoftLimit(soft: UInt64, hard: UInt64) -> UInt64? {
        let wanted = min(hard, ceiling)
        return wanted > soft ? wanted : nil
    }

    /// The connection cap: the configured one, lowered to what the descriptors left allow
    /// (`limit` minus those `inUse` at start minus `reserve`, divided by `perConnection`), and at
    /// least 1. A `limit` of 0 (unknown) leaves the configured cap.
    static func connectionCap(configured: Int, limit: UInt64, inUse: Int) -> Int {
        guard limit > 0 else { return configured }
        let free = Int(min(limit, ceiling)) - inUse - reserve
        return max(1, min(configured, free / perConnection))
    }
}

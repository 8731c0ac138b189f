/// File descriptors: the soft limit tv asks for at start, whether what that limit allows is
/// enough to start at all, and the number of connections it allows (`DescriptorLimit` reads the
/// limits and the descriptors already open, asks this, and applies it: before a session makes
/// anything, `DescriptorLimit.prepareSession`; when the proxy starts, `ProxyServer.start`).
///
/// What a session opens, measured (session 42) on a `tv run` inspecting, keeping content and
/// writing a decrypted capture, started with only the three standard streams: the least
/// `prlimit --nofile=N:N` it started under without a failure was 29 + 2 per event loop (31, 33
/// and 37 with 1, 2 and 4 loops; its first retention pass is the last to open anything), 26 + 2
/// per loop open once serving, before this session's lock (+1); 17 were open when the proxy
/// started (read back from the cap under limits of 4,096 and 4,097: 1,349 and 1,350).
///
/// What one proxied connection holds: the client's socket and the server's (2), and, once a
/// passed-through TLS direction has carried 256 KiB (`ProxyConnection.spliceAfterBytes`), a pipe
/// of two descriptors per spliced direction (up to 4 more). A pipe that cannot be opened falls
/// back to copying, so the budget counts 3 per connection: the two sockets and room for some
/// pipes.
struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors counted per connection.
    static let perConnection = 3
    /// Descriptors per event loop: its epoll instance and its inbox's eventfd (`EventLoop`).
    static let perLoop = 2
    /// What a session opens before its proxy starts, besides the descriptors open when tv
    /// started: the flow database's and the content writer's connections with their WAL and
    /// shared-memory files, the flow writer's lock, the decrypted capture, the session's lock
    /// (measured: 17 − 3).
    static let wiring = 14
    /// What it opens once the proxy starts, besides the loops: the listener, the control socket,
    /// libdispatch's epoll, eventfd, timerfd and three signalfds (the stop signals), the program
    /// lookup's socket, and the first retention pass's (measured: 33 + 1 − 17 − 4 with 2 loops).
    static let afterWiring = 13
    /// Kept free while running for what is not a connection: a `tv status` on the control
    /// socket, name lookups, content segment files, a retention pass, `tv run --web`'s and
    /// `--metrics`' sockets (not measured: room).
    static let running = 16
    /// The fewest connections worth starting for: a client with a little parallelism (a
    /// package manager's downloads). A browser needs more (6 per host); `tv run`'s banner says
    /// a cap that small (`RunBanner.connectionCapLine`).
    static let minimumConnections = 4
    /// The highest soft limit asked for: Linux's default `fs.nr_open` (a hard limit of
    /// "unlimited" cannot be the soft limit of RLIMIT_NOFILE).
    static let ceiling: UInt64 = 1 << 20

    /// The soft limit to set (the hard limit, as servers do: nginx's `worker_rlimit_nofile`,
    /// systemd's advice for programs that use epoll), or nil when it is already that high.
    static func raisedSoftLimit(soft: UInt64, hard: UInt64) -> UInt64? {
        let wanted = min(hard, ceiling)
        return wanted > soft ? wanted : nil
    }

    /// What a session with `loops` event loops holds besides its connections, once the proxy
    /// has started with `inUse` descriptors open: its loops, what it opens after them, and the
    /// room kept while running.
    static func besidesConnections(inUse: Int, loops: Int) -> Int {
        inUse + perLoop * max(1, loops) + afterWiring + running
    }

    /// The connection cap when the proxy starts: the configured one, lowered to what the
    /// descriptors left allow (`limit` minus `besidesConnections`, divided by `perConnection`),
    /// and at least 1. A `limit` of 0 (unknown) leaves the configured cap.
    static func connectionCap(configured: Int, limit: UInt64, inUse: Int, loops: Int) -> Int {
        guard limit > 0 else { return configured }
        let free = Int(min(limit, ceiling)) - besidesConnections(inUse: inUse, loops: loops)
        return max(1, min(configured, free / perConnection))
    }

    /// Whether a session can start under `limit`, decided before it makes anything.
    enum Start: Sendable, Equatable {
        /// It can; `cap` is the connection cap it will have (about: the proxy sizes it again
        /// from what is open then).
        case start(cap: Int)
        /// It cannot: it needs `needed` descriptors to start and take `minimumConnections`.
        case refuse(needed: Int)
    }

    /// The decision at the very start of `tv run` (and `tv exec`), with `inUse` descriptors open
    /// (the standard streams, whatever was inherited) and `loops` event loops to come.
    static func start(configured: Int, limit: UInt64, inUse: Int, loops: Int) -> Start {
        guard limit > 0 else { return .start(cap: configured) }
        let besides = besidesConnections(inUse: inUse + wiring, loops: loops)
        let needed = besides + minimumConnections * perConnection
        guard Int(min(limit, ceiling)) >= needed else { return .refuse(needed: needed) }
        return .start(cap: connectionCap(configured: configured, limit: limit, inUse: inUse + wiring, loops: loops))
    }
}

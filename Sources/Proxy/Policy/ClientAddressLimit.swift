import LocalCA

/// How many connections one client address may hold open at once (`tv run --max-per-client N`),
/// so that one client cannot take every connection the cap allows (as nginx's `limit_conn` keyed
/// by `$binary_remote_addr`). A pure value, shared by the loops under a lock: `admit` when a
/// connection is accepted, `release` when an admitted one closes.
///
/// Refusals are said once per address per `NoticeThrottle` interval (`Admission.refused`'s
/// `notice` counts the refusals that notice covers) and counted by the caller.
///
/// Loopback clients are not counted per address (`counts`): every local program is 127.0.0.1
/// (or ::1), so the address names no client. A trial's program holding 1,100 idle connections
/// from 127.0.0.1, reopening each one tv closed, had every other local program refused with
/// "your address has 1024 connections open" for as long as it ran. Counting per program instead
/// would need each connection's program on the accept path: `ProgramLookup` reads the owner's
/// descriptors (`SocketOwners`), and for a program holding 1,100 sockets one such walk took
/// 5.7 ms (1,107 readlinkat(2), this 2-core VM), so the loop could name fewer connections a
/// second than the program reopens; the lookup thread names them afterwards, too late to refuse.
/// Per user (sock_diag gives the socket's uid in one exact query) would not help: the programs
/// shut out were the same user's. Local clients are bounded by the connection cap (10,000 by
/// default, fewer when descriptors are short), whose refusal says the proxy is full, which is
/// true for everyone; a program of tv's own user can stop tv outright in any case. Clients of
/// this host reaching tv at another of its addresses (or redirected there in transparent mode)
/// come from that address and are still counted on it.
struct ClientAddressLimit: Sendable {
    /// Connections one address may hold; 0 = no limit.
    let maximum: Int
    private let noticeIntervalNanos: UInt64
    private var open: [IPAddress: Int] = [:]
    private var notices: [IPAddress: NoticeThrottle] = [:]

    /// - Parameters:
    ///   - maximum: connections one address may hold (0: no limit).
    ///   - noticeIntervalNanos: the shortest time between two notices about one address.
    init(maximum: Int, noticeIntervalNanos: UInt64 = NoticeThrottle.defaultIntervalNanos) {
        self.maximum = max(0, maximum)
        self.noticeIntervalNanos = noticeIntervalNanos
    }

    /// The answer to one new connection.
    enum Admission: Sendable, Equatable {
        case admitted
        /// Over the limit: refuse it. `notice`: say so now, covering this many refusals from the
        /// address (nil: said less than an interval ago).
        case refused(notice: UInt64?)
    }

    /// Whether connections from `address` count against the limit: all but loopback ones
    /// (`IPAddress.isLoopback`: 127.0.0.0/8, ::1, and 127.0.0.0/8 mapped into IPv6).
    static func counts(_ address: IPAddress) -> Bool { !address.isLoopback }

    /// A connection from `address` was accepted at `now` (monotonic ns). A loopback address is
    /// admitted without being counted (`counts`).
    mutating func admit(_ address: IPAddress, now: UInt64) -> Admission {
        guard maximum > 0, Self.counts(address) else { return .admitted }
        let count = open[address, default: 0]
        if count < maximum {
            open[address] = count + 1
            return .admitted
        }
        if notices.count >= 1_024 { notices = notices.filter { !$0.value.isStale(at: now) } }
        var throttle = notices[address] ?? NoticeThrottle(intervalNanos: noticeIntervalNanos)
        let notice = throttle.note(at: now)
        notices[address] = throttle
        return .refused(notice: notice)
    }

    /// An admitted connection from `address` closed.
    mutating func release(_ address: IPAddress) {
        guard let count = open[address] else { return }
        if count <= 1 { open[address] = nil } else { open[address] = count - 1 }
    }

    /// Connections `address` holds now.
    func openConnections(_ address: IPAddress) -> Int { open[address, default: 0] }

    /// Addresses holding at least one connection.
    var addresses: Int { open.count }

    /// The default: a quarter of the connection cap, at least 64, at most 1,024 (a browser opens
    /// up to 256 connections, a machine behind one address a few hundred; a flood of slow
    /// connections from one address is held to this).
    static func defaultMaximum(connectionCap: Int) -> Int {
        min(1_024, max(64, connectionCap / 4))
    }
}

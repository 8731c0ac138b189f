import LocalCA

/// How many connections one client address may hold open at once (`tv run --max-per-client N`),
/// so that one client cannot take every connection the cap allows (as nginx's `limit_conn` keyed
/// by `$binary_remote_addr`). A pure value, shared by the loops under a lock: `admit` when a
/// connection is accepted, `release` when an admitted one closes.
///
/// Refusals are said once per address per `NoticeThrottle` interval (`Admission.refused`'s
/// `notice` counts the refusals that notice covers) and counted by the caller.
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

    /// A connection from `address` was accepted at `now` (monotonic ns).
    mutating func admit(_ address: IPAddress, now: UInt64) -> Admission {
        guard maximum > 0 else { return .admitted }
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
    /// up to 256 connections, the whole host through an explicit proxy on 127.0.0.1 a few
    /// hundred; a flood of slow connections from one address is held to this).
    static func defaultMaximum(connectionCap: Int) -> Int {
        min(1_024, max(64, connectionCap / 4))
    }
}

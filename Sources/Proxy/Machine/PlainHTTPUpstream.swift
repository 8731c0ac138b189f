import FlowTerms
import Wire

/// The upstream leg of `PlainHTTPMachine`: the `host:port` it goes to, the addresses its name
/// resolved to, tried one by one in the resolver's order until one accepts, and the deadline of
/// the connect under way. Pure bookkeeping: the machine emits `.resolve` and `.connect` from
/// what it says.
struct PlainHTTPUpstream {
    /// Where the leg goes (nil: no leg).
    private(set) var target: HostPort?
    /// A leg is open (connecting or connected): requests may be forwarded into its queue.
    private(set) var isOpen = false
    /// A connect is under way (or the name is being resolved).
    private(set) var connecting = false
    /// When the connect under way gives up (monotonic ns; 0: none).
    private(set) var connectDeadline: UInt64 = 0
    /// The address being tried, or the one that accepted.
    private(set) var address: SocketAddress?
    private var addresses: [SocketAddress] = []
    private var nextAddress = 0
    /// Why the last address tried refused (nil: none refused yet).
    private(set) var lastError: Errno?
    /// Counts legs: a resolver's answer for an older one is stale.
    private(set) var attempt = 0

    /// Opens a leg to `target` that connects until `deadline`; the caller resolves the name
    /// (`attempt` names the answer) unless `numeric` gives the one address to try.
    mutating func open(_ target: HostPort, numeric: SocketAddress?, deadline: UInt64) {
        self.target = target
        attempt += 1
        isOpen = true
        connecting = true
        connectDeadline = deadline
        address = nil
        lastError = nil
        addresses = numeric.map { [$0] } ?? []
        nextAddress = 0
    }

    /// The resolver answered for leg `attempt`: false when that answer is stale.
    mutating func resolved(_ list: [SocketAddress], attempt id: Int) -> Bool {
        guard id == attempt, isOpen else { return false }
        addresses = list
        nextAddress = 0
        return true
    }

    /// Whether a resolver's failure for leg `id` concerns the open leg.
    func isCurrent(_ id: Int) -> Bool { id == attempt && isOpen }

    /// The next address to try; nil when every one was tried (or there is no leg).
    mutating func nextToTry() -> SocketAddress? {
        guard isOpen, nextAddress < addresses.count else { return nil }
        address = addresses[nextAddress]
        nextAddress += 1
        return address
    }

    /// The address being tried refused with `err`.
    mutating func refused(_ err: Errno) { lastError = err }

    /// The address being tried accepted.
    mutating func connected() {
        connecting = false
        connectDeadline = 0
    }

    /// The leg is closed. Returns false when there was none.
    mutating func close() -> Bool {
        guard isOpen else { return false }
        isOpen = false
        target = nil
        connecting = false
        return true
    }
}

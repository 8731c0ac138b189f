/// Why the proxy takes no more connections from a front end that hands them over (the TUN's):
/// asked before the front end connects anywhere (`ProxyServer.refusal(starting:)`) and answered
/// by `ProxyServer.adopt` when it refuses one all the same.
public enum AdoptionRefusal: Equatable, Sendable {
    /// The proxy is not running (stopping, or stopped).
    case stopping
    /// `cap` connections are open (or about to be), the most the proxy takes at once
    /// (`ProxyCounters.connectionCap`, sized from the descriptor limit: `DescriptorBudget`).
    case atConnectionCap(Int)

    /// Whether a front end may start one more connection (pure): nil when it may.
    ///
    /// The TUN front-ends connect to the server before the program's handshake completes
    /// (connect-first), so a connection counts against the cap from the program's SYN, not from
    /// its adoption: `starting` are the front end's connections under way (connecting, or
    /// connected and waiting for the listener's accept), each holding a descriptor already and
    /// each to be adopted. Counting them keeps the sum within the cap, so adoption no longer
    /// refuses what tv had connected. Asked at adoption only, tv connected to the server,
    /// completed the program's handshake and then reset it: a trial's server saw 20 SYNs, 15
    /// resets and 5 requests at a cap of 5.
    /// - Parameters:
    ///   - running: the proxy runs.
    ///   - open: connections the proxy holds (`ProxyCounters.openConnections`).
    ///   - starting: the front end's connections under way, not yet handed over.
    ///   - cap: the connection cap in force.
    public static func deciding(running: Bool, open: Int, starting: Int, cap: Int) -> AdoptionRefusal? {
        guard running else { return .stopping }
        return open + starting >= cap ? .atConnectionCap(cap) : nil
    }
}

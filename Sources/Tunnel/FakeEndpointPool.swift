/// The fake peers the NAT gives each redirected TCP connection: addresses that route into the
/// TUN but are configured nowhere (tun-nat.md "FP"), times a port range.
///
/// - The walk starts at a random slot, so that after a restart the first endpoints handed out are
///   not the ones whose listener-side sockets may still sit in TIME_WAIT (PAWS rejections).
/// - A released endpoint is quarantined for `quarantineNanos` (default 60 s, the TIME_WAIT of
///   `C:L ↔ F:q`) before it can be handed out again.
/// - Slot `i` is address `first + i % addressCount`, port `ports.lowerBound + i / addressCount`.
public struct FakeEndpointPool: Sendable {
    public let firstAddress: PacketAddress
    public let addressCount: UInt64
    public let ports: ClosedRange<UInt16>
    public let quarantineNanos: UInt64
    private var cursor: UInt64
    private var inUse: Set<PacketEndpoint> = []
    private var quarantined: [PacketEndpoint: UInt64] = [:]
    private var quarantineOrder: [(PacketEndpoint, UInt64)] = []
    private var quarantineHead = 0

    /// How many slots are tried per allocation before giving up (the pool is then as good as full).
    public static let maximumProbes = 4096

    /// - Parameters:
    ///   - startSlot: where the walk begins (reduced modulo the size); pass a random number.
    public init(firstAddress: PacketAddress, addressCount: UInt64, ports: ClosedRange<UInt16>,
                quarantineNanos: UInt64 = 60_000_000_000, startSlot: UInt64) {
        precondition(addressCount > 0)
        self.firstAddress = firstAddress
        self.addressCount = addressCount
        self.ports = ports
        self.quarantineNanos = quarantineNanos
        let size = addressCount * UInt64(ports.count)
        cursor = startSlot % size
    }

    /// Slots in the pool (addresses × ports).
    public var size: UInt64 { addressCount * UInt64(ports.count) }
    public var inUseCount: Int { inUse.count }
    public var quarantinedCount: Int { quarantined.count }

    /// The endpoint of slot `index`.
    public func endpoint(atSlot index: UInt64) -> PacketEndpoint {
        PacketEndpoint(firstAddress.adding(index % addressCount), ports.lowerBound &+ UInt16(index / addressCount))
    }

    /// Whether `endpoint` belongs to this pool (address range and port range).
    public func contains(_ endpoint: PacketEndpoint) -> Bool {
        guard endpoint.address.isIPv6 == firstAddress.isIPv6, ports.contains(endpoint.port) else { return false }
        if firstAddress.isIPv6 {
            guard endpoint.address.high == firstAddress.high, endpoint.address.low >= firstAddress.low else { return false }
            return endpoint.address.low - firstAddress.low < addressCount
        }
        guard endpoint.address.low >= firstAddress.low else { return false }
        return endpoint.address.low - firstAddress.low < addressCount
    }

    /// The next free endpoint that is neither in use nor quarantined at `now` (ns), or nil.
    public mutating func allocate(now: UInt64) -> PacketEndpoint? {
        releaseQuarantine(now: now)
        let size = self.size
        for _ in 0..<min(size, UInt64(Self.maximumProbes)) {
            let candidate = endpoint(atSlot: cursor)
            cursor = cursor + 1 == size ? 0 : cursor + 1
            if inUse.contains(candidate) || quarantined[candidate] != nil { continue }
            inUse.insert(candidate)
            return candidate
        }
        return nil
    }

    /// Gives `endpoint` back; it is reusable `quarantineNanos` after `now`.
    public mutating func release(_ endpoint: PacketEndpoint, now: UInt64) {
        guard inUse.remove(endpoint) != nil else { return }
        let until = now &+ quarantineNanos
        quarantined[endpoint] = until
        quarantineOrder.append((endpoint, until))
    }

    private mutating func releaseQuarantine(now: UInt64) {
        while quarantineHead < quarantineOrder.count, quarantineOrder[quarantineHead].1 <= now {
            let (endpoint, until) = quarantineOrder[quarantineHead]
            if quarantined[endpoint] == until { quarantined[endpoint] = nil }
            quarantineHead += 1
        }
        if quarantineHead > 1024 && quarantineHead * 2 > quarantineOrder.count {
            quarantineOrder.removeFirst(quarantineHead)
            quarantineHead = 0
        }
    }
}

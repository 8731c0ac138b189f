/// Puts fragmented IPv4 (RFC 791 §3.2, RFC 815) and IPv6 (RFC 8200 §4.5) datagrams back
/// together, so UDP larger than the TUN's MTU can be forwarded (tun-nat.md: without it, 3,000-byte
/// echoes timed out).
///
/// Bounded: at most `maximumDatagrams` datagrams and `maximumBytes` payload bytes are held (the
/// oldest is dropped to make room), each for at most `timeoutNanos`. Overlapping fragments drop
/// the whole datagram (RFC 5722), as do fragments past 65,535 bytes, non-final fragments whose
/// length is not a multiple of 8, and fragments that contradict the datagram's end.
///
/// The result is a fresh whole packet: a 20-byte IPv4 header (no options) or a 40-byte IPv6
/// header whose Next Header is the Fragment header's, followed by the reassembled payload.
public struct FragmentReassembler: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// Held; more fragments are needed.
        case incomplete
        /// The whole datagram as one packet.
        case complete([UInt8])
        /// This fragment (and the datagram it belonged to) was dropped.
        case dropped(PacketDrop)
    }

    struct Key: Hashable, Sendable {
        var source: PacketAddress
        var destination: PacketAddress
        var protocolNumber: UInt8
        var identification: UInt32
    }

    struct Partial: Sendable {
        var data: [UInt8] = []
        /// Received byte ranges, sorted, non-overlapping: [start, end).
        var ranges: [Range<Int>] = []
        /// The payload length, once the last fragment (MF = 0) arrived.
        var total: Int?
        var createdAt: UInt64
        var serial: UInt64
        var received: Int { ranges.reduce(0) { $0 + $1.count } }
    }

    public let maximumDatagrams: Int
    public let maximumBytes: Int
    public let timeoutNanos: UInt64
    private var partials: [Key: Partial] = [:]
    private var order: [(Key, UInt64)] = []
    private var orderHead = 0
    private var nextSerial: UInt64 = 0
    /// Payload bytes held now.
    public private(set) var bufferedBytes = 0
    /// Datagrams dropped because of the limits, and because they timed out.
    public private(set) var evicted = 0
    public private(set) var timedOut = 0

    public init(maximumDatagrams: Int = 256, maximumBytes: Int = 4 << 20, timeoutNanos: UInt64 = 30_000_000_000) {
        self.maximumDatagrams = maximumDatagrams
        self.maximumBytes = maximumBytes
        self.timeoutNanos = timeoutNanos
    }

    /// Datagrams waiting for fragments.
    public var pendingCount: Int { partials.count }

    /// Adds the fragment `packet` (whose `fragment` is set) read into `bytes`.
    public mutating func add(_ bytes: UnsafeRawBufferPointer, _ packet: IPPacket, now: UInt64) -> Outcome {
        guard let info = packet.fragment else { return .dropped(.badFragment) }
        expire(now: now)
        let key = Key(source: packet.source, destination: packet.destination, protocolNumber: packet.transportProtocol,
                      identification: info.identification)
        let start = info.offset
        let length = packet.length - packet.transportOffset
        let end = start + length
        // Non-final fragments carry multiples of 8 bytes (RFC 791 §3.2, RFC 8200 §4.5); nothing
        // may reach past the largest datagram; empty fragments say nothing.
        let limit = packet.isIPv6 ? 65_535 : 65_535 - 20
        guard length > 0, end <= limit, !info.moreFragments || length % 8 == 0 else {
            discard(key)
            return .dropped(.badFragment)
        }
        var partial = partials[key] ?? Partial(createdAt: now, serial: 0)
        let isNew = partials[key] == nil
        if !info.moreFragments {
            if let total = partial.total, total != end { discard(key); return .dropped(.badFragment) }
            if let last = partial.ranges.last, last.upperBound > end { discard(key); return .dropped(.badFragment) }
            partial.total = end
        } else if let total = partial.total, end > total {
            discard(key)
            return .dropped(.badFragment)
        }
        // Overlap with anything received drops the datagram (RFC 5722).
        let index = partial.ranges.firstIndex { $0.lowerBound >= end } ?? partial.ranges.count
        if index > 0, partial.ranges[index - 1].upperBound > start { discard(key); return .dropped(.badFragment) }
        if index < partial.ranges.count, partial.ranges[index].lowerBound < end { discard(key); return .dropped(.badFragment) }
        // Room: evict the oldest datagrams until this one fits.
        if isNew { while partials.count >= maximumDatagrams, evictOldest() {} }
        while bufferedBytes + length > maximumBytes, evictOldest(sparing: key) {}
        guard bufferedBytes + length <= maximumBytes else {
            discard(key)
            evicted += 1
            return .dropped(.fragmentLimit)
        }
        if partial.data.count < end { partial.data.append(contentsOf: repeatElement(0, count: end - partial.data.count)) }
        partial.data.withUnsafeMutableBytes { dst in
            dst.baseAddress!.advanced(by: start).copyMemory(from: bytes.baseAddress!.advanced(by: packet.transportOffset), byteCount: length)
        }
        partial.ranges.insert(start..<end, at: index)
        bufferedBytes += length
        if isNew {
            nextSerial += 1
            partial.serial = nextSerial
            order.append((key, nextSerial))
        }
        // Ranges never overlap and stay below the end, so holding `total` bytes means complete.
        if let total = partial.total, partial.received == total {
            partials[key] = partial
            discard(key)
            return .complete(Self.packet(key, payload: partial.data, total: total, isIPv6: packet.isIPv6))
        }
        partials[key] = partial
        return .incomplete
    }

    /// Drops datagrams older than the timeout; returns how many.
    @discardableResult
    public mutating func expire(now: UInt64) -> Int {
        var dropped = 0
        while orderHead < order.count {
            let (key, serial) = order[orderHead]
            guard let partial = partials[key], partial.serial == serial else { orderHead += 1; continue }
            guard now &- partial.createdAt >= timeoutNanos else { break }
            discard(key)
            orderHead += 1
            dropped += 1
        }
        timedOut += dropped
        compact()
        return dropped
    }

    private mutating func evictOldest(sparing spared: Key? = nil) -> Bool {
        var i = orderHead
        while i < order.count {
            let (key, serial) = order[i]
            if let partial = partials[key], partial.serial == serial, key != spared {
                discard(key)
                evicted += 1
                return true
            }
            i += 1
        }
        return false
    }

    private mutating func discard(_ key: Key) {
        if let partial = partials.removeValue(forKey: key) { bufferedBytes -= partial.received }
    }

    private mutating func compact() {
        if orderHead > 256 && orderHead * 2 > order.count {
            order.removeFirst(orderHead)
            orderHead = 0
        }
    }

    static func packet(_ key: Key, payload: [UInt8], total: Int, isIPv6: Bool) -> [UInt8] {
        let headerLength = isIPv6 ? 40 : 20
        var out = [UInt8](repeating: 0, count: headerLength + total)
        out.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!
            PacketBuilder.writeIPHeader(base, source: key.source, destination: key.destination, protocolNumber: key.protocolNumber,
                                        transportLength: total, identification: UInt16(truncatingIfNeeded: key.identification))
            payload.withUnsafeBytes { base.advanced(by: headerLength).copyMemory(from: $0.baseAddress!, byteCount: total) }
        }
        return out
    }
}

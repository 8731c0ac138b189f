#if canImport(Glibc)
import Glibc
#endif

/// The last datagrams a UDP flow that may not be fragmented sent on (pure): each one's IP and UDP
/// headers as the program sent them and the first bytes of its payload, so the ICMP error a
/// router sends about one can be passed on quoting the program's datagram with its own lengths.
///
/// The upstream socket's error queue hands tv the router's ICMP type, code and MTU and the part
/// of tv's datagram's payload the router quoted (RFC 1812 §4.3.2.3: as much as fits 576 bytes,
/// 520 of a UDP payload; RFC 4443 §2.4 (c): 1,280, 1,184), not the quoted headers. Rebuilt from
/// that alone, the quote's IPv4 Total Length and UDP Length counted the quoted bytes (548 / 528
/// for a 1,428-byte datagram, IPv6 Payload Length 1,192 for 1,448: a trial's tshark read "MTU of
/// next hop: 1280" beside a 548-byte packet). The datagram the quote begins is found here by its
/// first bytes (32: past a QUIC short header's connection ID, into its packet number and
/// ciphertext, so two packets of one connection differ) among the last `capacity` sent.
///
/// Storage is one buffer made at the first note, each slot `slotSize` bytes; a note copies at most
/// `headerRoom + prefixLength` bytes and allocates nothing.
public struct SentDatagrams: Sendable {
    /// Datagrams remembered, the oldest overwritten first.
    public static let capacity = 8
    /// The most header bytes kept (IPv4 with options, IPv6 with extension headers, then UDP's 8).
    public static let headerRoom = 64
    /// Payload bytes kept to tell datagrams apart.
    public static let prefixLength = 32
    static let slotSize = headerRoom + prefixLength

    private var storage: [UInt8] = []
    /// Per slot: header bytes kept (0: empty), payload bytes kept, the payload's whole length.
    private var headerLengths = [Int](repeating: 0, count: capacity)
    private var prefixLengths = [Int](repeating: 0, count: capacity)
    private var payloadLengths = [Int](repeating: 0, count: capacity)
    /// The slot the next note takes.
    private var next = 0

    public init() {}

    /// Notes the datagram `packet` (its IP header first) whose UDP payload starts at
    /// `payloadOffset` and is `payloadLength` bytes long. A header longer than `headerRoom` is not
    /// kept (its datagram cannot be quoted so).
    public mutating func note(_ packet: UnsafeRawBufferPointer, payloadOffset: Int, payloadLength: Int) {
        guard payloadOffset <= Self.headerRoom, payloadOffset + min(payloadLength, Self.prefixLength) <= packet.count else { return }
        if storage.isEmpty { storage = [UInt8](repeating: 0, count: Self.capacity * Self.slotSize) }
        let slot = next
        next = (next + 1) % Self.capacity
        let kept = min(payloadLength, Self.prefixLength)
        storage.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress! + slot * Self.slotSize
            base.copyMemory(from: packet.baseAddress!, byteCount: payloadOffset)
            (base + Self.headerRoom).copyMemory(from: packet.baseAddress! + payloadOffset, byteCount: kept)
        }
        headerLengths[slot] = payloadOffset
        prefixLengths[slot] = kept
        payloadLengths[slot] = payloadLength
    }

    /// The headers (IP and UDP, as the program sent them) of the newest datagram whose payload
    /// begins with `quoted` (compared over the bytes kept of both) and holds at least its bytes;
    /// with `largerThan`, only a datagram whose IP packet is longer than that (an MTU a router
    /// could not carry it over). Nil when none is remembered: a quote of no payload bytes (a
    /// router quoting RFC 792's 8 bytes) matches the newest datagram the rest allows.
    public func headers(quoting quoted: UnsafeRawBufferPointer, largerThan mtu: Int? = nil) -> [UInt8]? {
        guard !storage.isEmpty else { return nil }
        return storage.withUnsafeBytes { raw -> [UInt8]? in
            for back in 1...Self.capacity {
                let slot = (next - back + Self.capacity) % Self.capacity
                let header = headerLengths[slot]
                guard header > 0, payloadLengths[slot] >= quoted.count else { continue }
                if let mtu, header + payloadLengths[slot] <= mtu { continue }
                let base = raw.baseAddress! + slot * Self.slotSize
                let compared = min(prefixLengths[slot], quoted.count)
                guard compared == 0 || memcmp(base + Self.headerRoom, quoted.baseAddress!, compared) == 0 else { continue }
                return Array(UnsafeRawBufferPointer(start: base, count: header))
            }
            return nil
        }
    }
}

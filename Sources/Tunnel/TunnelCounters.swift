import Synchronization

/// Live counters of one TUN engine, written by its thread (relaxed atomics) and read by anyone.
public final class TunnelCounters: Sendable {
    public let packetsRead = Atomic<UInt64>(0)
    public let packetsWritten = Atomic<UInt64>(0)
    public let bytesRead = Atomic<UInt64>(0)
    public let bytesWritten = Atomic<UInt64>(0)
    /// What the programs behind the TUN sent (`.clientToServer`) and received
    /// (`.serverToClient`): packets and IP bytes, each counted once, as the capture sees them (a
    /// reassembled datagram is one packet). The read and write counts above are the TUN's own:
    /// TCP crosses it twice (program → tv's listener, and back), so there each is the two
    /// directions together.
    public let packetsFromPrograms = Atomic<UInt64>(0)
    public let bytesFromPrograms = Atomic<UInt64>(0)
    public let packetsToPrograms = Atomic<UInt64>(0)
    public let bytesToPrograms = Atomic<UInt64>(0)
    /// TCP connections redirected to the listener (SYN forwarded after the upstream connect).
    public let tcpRedirected = Atomic<UInt64>(0)
    /// Upstream connects that failed (the app got a reset: "connection refused").
    public let tcpConnectFailed = Atomic<UInt64>(0)
    /// Resets crafted for segments of no known connection.
    public let tcpResetsSent = Atomic<UInt64>(0)
    /// A new SYN reused a four-tuple with a different ISN: the old entry was replaced.
    public let tcpTupleReused = Atomic<UInt64>(0)
    /// Accepted connections handed to the proxy, and those refused (no entry, no upstream).
    public let tcpAdopted = Atomic<UInt64>(0)
    public let tcpAcceptRefused = Atomic<UInt64>(0)
    /// Connections tv had connected upstream that the proxy then refused to adopt, by why
    /// (`AdoptionRefusal`): its cap, or it was stopping; both sides reset. (Rare: room is asked
    /// at the program's SYN, and a SYN without it is dropped: `PacketDrop.connectionCap`.)
    public let tcpNotAdoptedAtCap = Atomic<UInt64>(0)
    public let tcpNotAdoptedStopping = Atomic<UInt64>(0)
    public let udpFlows = Atomic<UInt64>(0)
    public let udpDatagramsUp = Atomic<UInt64>(0)
    public let udpDatagramsDown = Atomic<UInt64>(0)
    /// The UDP datagrams' payload bytes (DNS's too): what the programs sent and received in them.
    public let udpBytesUp = Atomic<UInt64>(0)
    public let udpBytesDown = Atomic<UInt64>(0)
    public let dnsQueries = Atomic<UInt64>(0)
    public let dnsAnswers = Atomic<UInt64>(0)
    public let dnsTimeouts = Atomic<UInt64>(0)
    /// Queries to the tunnel's DNS address that could not go to a resolver (none, or it could not
    /// be reached): tv answered them SERVFAIL (each its own failed flow).
    public let dnsQueriesUnsent = Atomic<UInt64>(0)
    /// Datagrams from a resolver that answered no waiting query (no query with their ID, too
    /// short to have one, or another question): passed on, naming nothing (`DNSAnswerMatch`).
    public let dnsStrayAnswers = Atomic<UInt64>(0)
    /// Datagrams from a resolver that repeated the answer to a query already answered (a path or
    /// resolver that duplicates datagrams): passed on, counted on that query's flow
    /// (`DNSReplyOwner.answered`).
    public let dnsRepeatedAnswers = Atomic<UInt64>(0)
    public let fragmentsReassembled = Atomic<UInt64>(0)
    /// UDP datagrams too large for the upstream path: answered with ICMP "fragmentation needed" /
    /// "packet too big" so the app lowers its datagram size.
    public let pathMTUSignals = Atomic<UInt64>(0)
    /// Entries read from upstream UDP sockets' error queues (ICMP errors routers sent back, and
    /// tv's own failed sends), and of those: ICMP "port unreachable" passed on to the app, and
    /// errors not passed on (other ICMP messages, unusable MTUs; tv's own sends are not counted).
    public let udpErrorQueueRead = Atomic<UInt64>(0)
    public let portUnreachableSignals = Atomic<UInt64>(0)
    /// Datagrams tv could not send on (no route, refused: `UnsendableDatagram`), answered with
    /// ICMP destination unreachable so the program's socket fails at once.
    public let unreachableSignals = Atomic<UInt64>(0)
    public let upstreamErrorsIgnored = Atomic<UInt64>(0)
    /// The TUN_F_* offloads the TUN runs with (TUN_F_CSUM 1 | TSO4 2 | TSO6 4; 0: plain, no
    /// virtio-net header), and 1 when they were asked for but the kernel refused (the engine
    /// runs plain then; `TUNOffload.unavailableReason` says why).
    public let tunOffloads = Atomic<UInt64>(0)
    public let tunOffloadUnavailable = Atomic<UInt64>(0)
    /// Packets read as GSO super-packets (TSO on the TUN: more than one segment's payload; they
    /// are forwarded whole, their GSO fields kept).
    public let gsoPacketsRead = Atomic<UInt64>(0)
    /// Names from lookups (`LiveHostNames`): DNS answers that gave addresses, the name → address
    /// pairs they gave, answers that gave none (NXDOMAIN, NODATA, only other types) and answers
    /// that could not be read; live addresses dropped because the table was full. (The flows
    /// named so are counted as they close: `SessionTally`.)
    public let dnsAnswersWithAddresses = Atomic<UInt64>(0)
    public let dnsNamesLearned = Atomic<UInt64>(0)
    public let dnsAnswersWithoutAddresses = Atomic<UInt64>(0)
    public let dnsAnswersUnreadable = Atomic<UInt64>(0)
    public let liveNamesEvicted = Atomic<UInt64>(0)
    /// DNS over TCP (`TCPDNSAnswers`): responses the relays handed on, and dropped because too
    /// many waited; responses no query on their connection asked; queries not tracked (too many
    /// waited on one connection); bytes not read (after a message that was not DNS, or cut by
    /// the connection's end); connections to port 53 that did not speak DNS.
    public let dnsTCPAnswers = Atomic<UInt64>(0)
    public let dnsTCPAnswersDropped = Atomic<UInt64>(0)
    public let dnsTCPStrayResponses = Atomic<UInt64>(0)
    public let dnsTCPQueriesNotTracked = Atomic<UInt64>(0)
    public let dnsTCPBytesNotRead = Atomic<UInt64>(0)
    public let dnsTCPStreamsNotDNS = Atomic<UInt64>(0)
    /// Names from QUIC (`QUICNameReader`): connections whose ClientHello named a host, those whose
    /// ClientHello named none, those whose handshake could not be read to the end; and the
    /// Initial packets behind them: opened, not opened (no key fitted, cut short), reads started
    /// over (a Retry or a version change), and QUIC flows not read because too many were being
    /// read at once.
    public let quicNamed = Atomic<UInt64>(0)
    public let quicNoName = Atomic<UInt64>(0)
    public let quicUnreadable = Atomic<UInt64>(0)
    public let quicPacketsOpened = Atomic<UInt64>(0)
    public let quicPacketsNotOpened = Atomic<UInt64>(0)
    public let quicReadRestarts = Atomic<UInt64>(0)
    public let quicReadsSkipped = Atomic<UInt64>(0)
    /// Sizes now (set by the engine after each pass).
    public let natEntries = Atomic<Int>(0)
    /// UDP flows open now, as the flow list has them (each waiting DNS query one).
    public let udpFlowsOpen = Atomic<Int>(0)
    public let fragmentsPending = Atomic<Int>(0)
    /// Addresses with live names, and QUIC handshakes being read.
    public let liveNameAddresses = Atomic<Int>(0)
    public let quicReading = Atomic<Int>(0)
    /// One counter per drop reason (an array cannot hold `Atomic` itself: it is not copyable).
    private final class Cell: Sendable { let value = Atomic<UInt64>(0) }
    private let drops: [Cell]

    public init() {
        drops = PacketDrop.allCases.map { _ in Cell() }
    }

    @inline(__always)
    func drop(_ reason: PacketDrop) {
        drops[Self.index[reason]!].value.wrappingAdd(1, ordering: .relaxed)
    }

    private static let index: [PacketDrop: Int] = Dictionary(uniqueKeysWithValues: PacketDrop.allCases.enumerated().map { ($1, $0) })

    /// Dropped packets by reason (only reasons that happened).
    public var dropped: [PacketDrop: UInt64] {
        var out: [PacketDrop: UInt64] = [:]
        for (i, reason) in PacketDrop.allCases.enumerated() {
            let n = drops[i].value.load(ordering: .relaxed)
            if n > 0 { out[reason] = n }
        }
        return out
    }

    /// Every counter by name (for `tv status` / diagnostics and tests).
    public var snapshot: [String: UInt64] {
        var out: [String: UInt64] = [
            "packetsRead": packetsRead.load(ordering: .relaxed), "packetsWritten": packetsWritten.load(ordering: .relaxed),
            "bytesRead": bytesRead.load(ordering: .relaxed), "bytesWritten": bytesWritten.load(ordering: .relaxed),
            "packetsFromPrograms": packetsFromPrograms.load(ordering: .relaxed),
            "bytesFromPrograms": bytesFromPrograms.load(ordering: .relaxed),
            "packetsToPrograms": packetsToPrograms.load(ordering: .relaxed),
            "bytesToPrograms": bytesToPrograms.load(ordering: .relaxed),
            "tcpRedirected": tcpRedirected.load(ordering: .relaxed), "tcpConnectFailed": tcpConnectFailed.load(ordering: .relaxed),
            "tcpResetsSent": tcpResetsSent.load(ordering: .relaxed), "tcpTupleReused": tcpTupleReused.load(ordering: .relaxed),
            "tcpAdopted": tcpAdopted.load(ordering: .relaxed), "tcpAcceptRefused": tcpAcceptRefused.load(ordering: .relaxed),
            "tcpNotAdoptedAtCap": tcpNotAdoptedAtCap.load(ordering: .relaxed),
            "tcpNotAdoptedStopping": tcpNotAdoptedStopping.load(ordering: .relaxed),
            "udpFlows": udpFlows.load(ordering: .relaxed), "udpDatagramsUp": udpDatagramsUp.load(ordering: .relaxed),
            "udpDatagramsDown": udpDatagramsDown.load(ordering: .relaxed),
            "udpBytesUp": udpBytesUp.load(ordering: .relaxed), "udpBytesDown": udpBytesDown.load(ordering: .relaxed), "dnsQueries": dnsQueries.load(ordering: .relaxed),
            "dnsAnswers": dnsAnswers.load(ordering: .relaxed), "dnsTimeouts": dnsTimeouts.load(ordering: .relaxed),
            "dnsQueriesUnsent": dnsQueriesUnsent.load(ordering: .relaxed),
            "dnsStrayAnswers": dnsStrayAnswers.load(ordering: .relaxed),
            "dnsRepeatedAnswers": dnsRepeatedAnswers.load(ordering: .relaxed),
            "fragmentsReassembled": fragmentsReassembled.load(ordering: .relaxed),
            "pathMTUSignals": pathMTUSignals.load(ordering: .relaxed),
            "udpErrorQueueRead": udpErrorQueueRead.load(ordering: .relaxed),
            "portUnreachableSignals": portUnreachableSignals.load(ordering: .relaxed),
            "unreachableSignals": unreachableSignals.load(ordering: .relaxed),
            "upstreamErrorsIgnored": upstreamErrorsIgnored.load(ordering: .relaxed),
            "tunOffloads": tunOffloads.load(ordering: .relaxed),
            "tunOffloadUnavailable": tunOffloadUnavailable.load(ordering: .relaxed),
            "gsoPacketsRead": gsoPacketsRead.load(ordering: .relaxed),
            "natEntries": UInt64(max(0, natEntries.load(ordering: .relaxed))),
            "udpFlowsOpen": UInt64(max(0, udpFlowsOpen.load(ordering: .relaxed))),
            "fragmentsPending": UInt64(max(0, fragmentsPending.load(ordering: .relaxed))),
        ]
        for (key, value) in nameCounters { out[key] = value }
        for (reason, n) in dropped { out["dropped." + reason.rawValue] = n }
        return out
    }
}

import Wire
import CTVShims
import Proxy
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// The engine thread's state, run by an `EpollLoop` (Proxy's one loop type). Not Sendable:
/// made on the engine thread and used only there (`TunnelEngine` talks to it through its inbox).
///
/// Handlers on the loop: this engine (side 0: the TUN; its timer: housekeeping every 200 ms),
/// a `Listener` per family, a `PendingConnect` per upstream connect under way, a `UDPFlow` per
/// UDP association.
final class EngineLoop: LoopHandler {
    let configuration: TunnelEngineConfiguration
    let plan: TunnelAddressPlan
    let tunFD: Int32
    /// How the TUN was opened: `offload.headerSize` bytes of virtio-net header precede every
    /// packet read and written (0: none).
    let offload: TUNOffload
    let proxy: ProxyServer
    let sink: (any FlowSink)?
    let dnsObserver: DNSAnswerObserver?
    /// The packet capture (nil: none); asked `isCapturing` before each packet.
    let recorder: (any PacketRecorder)?
    let counters: TunnelCounters
    /// Where other threads post work for this engine (the stop; a held failure's lookup answered).
    let inbox: LoopInbox<EngineLoop>
    /// The loop this engine runs on (tokens, timers, the inbox).
    let loop: EpollLoop
    var nat: TCPNATTable
    var reassembler: FragmentReassembler
    var pendingConnects: [UInt64: PendingConnect] = [:]
    /// Connects that failed at once, their resets held while their programs are looked up
    /// (`failConnect`).
    var heldFailures: [UInt64: HeldFailure] = [:]
    var readyUpstreams: [UInt64: ReadyUpstream] = [:]
    var udpFlows: [UDPFlowKey: UDPFlow] = [:]
    /// Five-tuples whose datagram tv could not send, with the failed flow it was given and until
    /// when (`EngineLoop.unsentMemoryNanos`): the program's next datagrams go to that flow
    /// (a trial's retrying program made a failed row per datagram). At most
    /// `maximumUnsentRemembered`.
    var recentlyUnsent: [UDPFlowKey: (flowID: UInt64, until: UInt64)] = [:]
    /// Names from lookups (`EngineNames.swift`): the live names DNS answers gave, swept at most
    /// every `nameSweepNanos`; QUIC handshakes being read (`EngineQUIC.swift`).
    var liveNames = LiveHostNames()
    var lastNameSweep: UInt64 = 0
    var quicReading = 0
    /// Every packet read lands here (its virtio-net header, if any, ends at `readPacketOffset`,
    /// so the IP header is 16-byte aligned); crafted packets are built in `writeBuffer`.
    let readBuffer: UnsafeMutableRawBufferPointer
    let readPacketOffset: Int
    let writeBuffer: UnsafeMutableRawBufferPointer
    /// The virtio-net header of the packet being written (gathered in front of it by writev).
    private let headerScratch: UnsafeMutableRawBufferPointer
    private let writeVector: UnsafeMutablePointer<iovec>
    /// This engine's token on the loop (the TUN is its side 0).
    private var token: UInt64 = 0
    private var listeners: [Listener] = []
    /// Why the engine stopped by itself (the TUN went away), if it did.
    private var stopReason: String?
    var ipIdentification: UInt16 = 1
    var resolverIndex = 0
    /// Monotonic ns: the loop's, copied in when a handler is entered (`syncClock`), so the
    /// per-packet code reads a field of this engine, not the loop's across the module boundary.
    private(set) var now: UInt64
    /// How long an upstream waits for its accept before both are given up (the app vanished
    /// between its SYN and the handshake's end).
    static let acceptWaitNanos: UInt64 = 30_000_000_000
    static let housekeepingNanos: UInt64 = 200_000_000
    /// Events taken per epoll_wait.
    static let maxEvents = 128
    /// Accepts per readiness event on a listener.
    static let acceptBurst = 128

    init(configuration: TunnelEngineConfiguration, tunFD: Int32, offload: TUNOffload, inbox: LoopInbox<EngineLoop>, proxy: ProxyServer,
         sink: (any FlowSink)?, dnsObserver: DNSAnswerObserver?, recorder: (any PacketRecorder)?, counters: TunnelCounters) throws {
        self.configuration = configuration
        plan = configuration.plan
        self.tunFD = tunFD
        self.offload = offload
        self.proxy = proxy
        self.sink = sink
        self.dnsObserver = dnsObserver
        self.recorder = recorder
        self.counters = counters
        self.inbox = inbox
        do {
            loop = try EpollLoop(maxEvents: Self.maxEvents)
        } catch {
            throw TunnelError.cannotListen(reason: Errno(error.code).phrase)
        }
        now = loop.now
        guard inbox.wakeFD >= 0 else { throw TunnelError.cannotListen(reason: "eventfd: \(Errno(errno).phrase)") }
        var random = SystemRandomNumberGenerator()
        let pool4 = FakeEndpointPool(firstAddress: plan.fakePool4, addressCount: plan.fakePool4Count, ports: plan.fakePorts,
                                     startSlot: random.next())
        let pool6 = plan.address6 == nil ? nil
            : FakeEndpointPool(firstAddress: plan.fakePool6, addressCount: plan.fakePool6Count, ports: plan.fakePorts, startSlot: random.next())
        nat = TCPNATTable(capacity: configuration.maximumTCPEntries, pool4: pool4, pool6: pool6)
        reassembler = FragmentReassembler(maximumDatagrams: configuration.fragmentDatagrams, maximumBytes: configuration.fragmentBytes)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536 + 256, alignment: 16)
        readPacketOffset = offload.headerSize == 0 ? 0 : (offload.headerSize + 15) / 16 * 16
        writeBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536 + 256, alignment: 16)
        headerScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 16)
        headerScratch.initializeMemory(as: UInt8.self, repeating: 0)
        writeVector = UnsafeMutablePointer<iovec>.allocate(capacity: 2)
        token = loop.register(self)
        loop.watch(tunFD, token: token, side: 0, events: tv_EPOLLIN, level: true)
        loop.attach(inbox, to: self)
        for fd in [configuration.listener4.fd] + (configuration.listener6.map { [$0.fd] } ?? []) {
            let listener = Listener(loop: loop, fd: fd, exclusive: false, burst: Self.acceptBurst,
                                    accepted: { [unowned self] client, peer in accepted(client, peer: peer) },
                                    acceptFailed: { [proxy] err in proxy.acceptFailed(err) })
            listener.start()
            listeners.append(listener)
        }
        // Housekeeping at once, then every 200 ms.
        loop.armTimer(token, at: loop.now)
    }

    deinit {
        readBuffer.deallocate()
        writeBuffer.deallocate()
        headerScratch.deallocate()
        writeVector.deallocate()
    }

    /// Runs until stopped (`stop`, posted by `TunnelEngine.stop`) or until the TUN goes away;
    /// returns why it stopped on its own.
    func run() -> String? {
        if let code = loop.run() { return "the engine's epoll failed (\(Errno(code).phrase))" }
        return stopReason
    }

    /// Ends the loop after this turn.
    func stop() { loop.stop() }

    // MARK: LoopHandler (the TUN and housekeeping)

    /// Takes the loop's clock of this turn; every handler of the engine calls it first.
    func syncClock() { now = loop.now }

    func loopEvent(side: Int, events: UInt32) {
        syncClock()
        if let reason = readTUN() {
            stopReason = reason
            loop.stop()
        }
    }

    func loopTimer(deadline: UInt64) {
        syncClock()
        housekeeping()
        loop.armTimer(token, at: now + Self.housekeepingNanos)
    }

    /// Reads packets until the TUN has none (at most 1,024 per turn, for fairness).
    private func readTUN() -> String? {
        let headerSize = offload.headerSize
        let start = readPacketOffset - headerSize
        for _ in 0..<1_024 {
            let n = read(tunFD, readBuffer.baseAddress! + start, readBuffer.count - start)
            if n > 0 {
                counters.packetsRead.wrappingAdd(1, ordering: .relaxed)
                guard n > headerSize else { counters.drop(.truncated); continue }
                counters.bytesRead.wrappingAdd(UInt64(n - headerSize), ordering: .relaxed)
                let header = headerSize == 0 ? VirtioNetHeader.zero : VirtioNetHeader(reading: readBuffer.baseAddress! + start)
                if header.isGSO { counters.gsoPacketsRead.wrappingAdd(1, ordering: .relaxed) }
                handlePacket(UnsafeMutableRawBufferPointer(rebasing: readBuffer[readPacketOffset..<(start + n)]), header: header)
                continue
            }
            if n == 0 { return nil }
            switch errno {
            case EAGAIN, EWOULDBLOCK: return nil
            case EINTR: continue
            default:
                // EBADFD: the namespace the TUN was moved into is gone (tun-nat.md "Lifetime").
                return "the TUN device went away (\(Errno(errno).phrase))"
            }
        }
        return nil
    }

    /// Writes one packet into the TUN, behind `header` when the TUN takes virtio-net headers:
    /// a forwarded segment keeps the header it was read with (its partial checksum and GSO
    /// fields still describe it: NAT changes no length), a crafted packet carries `.zero` (its
    /// checksums are complete).
    func writeTUN(_ bytes: UnsafeRawBufferPointer, header: VirtioNetHeader = .zero) {
        let headerSize = offload.headerSize
        let n: Int
        if headerSize == 0 {
            n = write(tunFD, bytes.baseAddress, bytes.count)
        } else {
            header.write(to: headerScratch.baseAddress!)
            writeVector[0] = iovec(iov_base: headerScratch.baseAddress, iov_len: headerSize)
            writeVector[1] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
            n = writev(tunFD, writeVector, 2) - headerSize
        }
        if n == bytes.count {
            counters.packetsWritten.wrappingAdd(1, ordering: .relaxed)
            counters.bytesWritten.wrappingAdd(UInt64(n), ordering: .relaxed)
        }
    }

    /// Hands a packet the program sent (`.clientToServer`, as it sent it, before any rewrite) or
    /// received (`.serverToClient`, as it receives it) to the capture; `flow` 0 for a packet of
    /// no flow (refused, dropped). Every packet the program sends or receives passes here once,
    /// so this also counts them by direction (`TunnelCounters.packetsFromPrograms` …).
    /// - Parameters:
    ///   - program: false for the kernel's own link messages (`PacketDrop.linkControl`):
    ///     captured, not counted as a program's.
    ///   - comment: kept beside the packet in the capture (`ICMPErrorNote`), nil for none.
    @inline(__always)
    func capture(_ packet: UnsafeRawBufferPointer, flow: UInt64, _ direction: Direction, program: Bool = true, comment: String? = nil) {
        if program && direction == .clientToServer {
            counters.packetsFromPrograms.wrappingAdd(1, ordering: .relaxed)
            counters.bytesFromPrograms.wrappingAdd(UInt64(packet.count), ordering: .relaxed)
        } else if program {
            counters.packetsToPrograms.wrappingAdd(1, ordering: .relaxed)
            counters.bytesToPrograms.wrappingAdd(UInt64(packet.count), ordering: .relaxed)
        }
        guard let recorder, recorder.isCapturing else { return }
        if let comment {
            recorder.record(flow: flow, direction: direction, timeMicros: EngineClock.wallMicros(), packet: packet, comment: comment)
        } else {
            recorder.record(flow: flow, direction: direction, timeMicros: EngineClock.wallMicros(), packet: packet)
        }
    }

    // MARK: dispatch

    /// - Parameter header: the packet's virtio-net header (`.zero` without offload).
    func handlePacket(_ bytes: UnsafeMutableRawBufferPointer, header: VirtioNetHeader = .zero) {
        let packet: IPPacket
        switch PacketParser.parse(UnsafeRawBufferPointer(bytes)) {
        case .failure(let reason):
            counters.drop(reason)
            return
        case .success(let parsed):
            packet = parsed
        }
        if packet.fragment != nil {
            switch reassembler.add(UnsafeRawBufferPointer(bytes), packet, now: now) {
            case .incomplete:
                break
            case .dropped(let reason):
                counters.drop(reason)
            case .complete(var whole):
                counters.fragmentsReassembled.wrappingAdd(1, ordering: .relaxed)
                whole.withUnsafeMutableBytes { raw in
                    switch PacketParser.parse(UnsafeRawBufferPointer(raw)) {
                    case .failure(let reason): counters.drop(reason)
                    // A reassembled datagram is a new packet with complete checksums (the
                    // kernel finishes checksums before it fragments).
                    case .success(let inner): handleWhole(raw, inner, header: .zero, reassembled: true)
                    }
                }
            }
            return
        }
        handleWhole(bytes, packet, header: header, reassembled: false)
    }

    private func handleWhole(_ bytes: UnsafeMutableRawBufferPointer, _ packet: IPPacket, header: VirtioNetHeader, reassembled: Bool) {
        switch packet.transportProtocol {
        case IPProtocolNumber.tcp: handleTCP(bytes, packet, vnet: header)
        case IPProtocolNumber.udp: handleUDP(bytes, packet, vnet: header, reassembled: reassembled)
        case IPProtocolNumber.icmp, IPProtocolNumber.icmpv6:
            let link = packet.transportProtocol == IPProtocolNumber.icmpv6 && packet.transportLength >= 1
                && ICMPv6LinkControl.isLinkControl(type: bytes[packet.transportOffset])
            capture(UnsafeRawBufferPointer(rebasing: bytes[0..<min(packet.length, bytes.count)]), flow: 0, .clientToServer, program: !link)
            counters.drop(link ? .linkControl : .icmp)
        default:
            capture(UnsafeRawBufferPointer(rebasing: bytes[0..<min(packet.length, bytes.count)]), flow: 0, .clientToServer)
            counters.drop(.otherProtocol)
        }
    }

    // MARK: housekeeping

    private func housekeeping() {
        let wall = EngineClock.wallMicros()
        if !recentlyUnsent.isEmpty { recentlyUnsent = recentlyUnsent.filter { $0.value.until > now } }
        expireConnects()
        announceSlowConnects()
        for entry in nat.expire(now: now) { programLeft(entry, reset: false) }
        let timedOut = reassembler.expire(now: now)
        for _ in 0..<timedOut { counters.drop(.fragmentTimeout) }
        expireUDP(wallMicros: wall)
        sweepNames()
        counters.natEntries.store(nat.count, ordering: .relaxed)
        // As the flow list has them: an association's one flow, a DNS association's waiting queries.
        counters.udpFlowsOpen.store(udpFlows.values.reduce(0) { $0 + ($1.isDNS ? $1.queries.count : 1) }, ordering: .relaxed)
        counters.fragmentsPending.store(reassembler.pendingCount, ordering: .relaxed)
    }

    /// Reports opened the flow of every connect still going at a housekeeping tick (so 0–200 ms
    /// old; most connects finish long before one): the program lookup then asks for the
    /// program's socket while it waits in SYN-SENT. Reported only when the flow ends, a connect
    /// that failed was looked up after tv's reset had closed that socket, and its program read
    /// "the socket was gone (a program that finished at once)" while the program still waited
    /// (a new-user trial).
    private func announceSlowConnects() {
        guard let sink else { return }
        // A connect without an id from the SYN (none could be given) is reported once, at its end.
        for pending in pendingConnects.values where !pending.announced && pending.entry.flowID != 0 {
            guard let facts = unadoptedFacts(pending.entry, startMicros: pending.startMicros) else { continue }
            sink.flowOpened(facts)
            pending.announced = true
        }
    }

    /// Stops: every upstream socket still ours is closed and its flow recorded as stopped, UDP
    /// flows are reported closed.
    func shutdown() {
        // Held resets go now, each flow with its own failure.
        for id in Array(heldFailures.keys) { heldFailureDue(id) }
        // A connect that never completed was still going, not failed by tv (it read "failed —
        // tv stopped": a trial's unanswered fd77::99).
        let stillConnecting = ConnectionFailure.stillConnecting(commandEnded: configuration.endsWithCommand)
        for id in Array(pendingConnects.keys) {
            if let entry = nat.entry(id) { abandon(entry, stillConnecting) } else { discardUpstream(id) }
        }
        for id in Array(readyUpstreams.keys) {
            if let entry = nat.entry(id) { abandon(entry, .stopped) } else { discardUpstream(id) }
        }
        let wall = EngineClock.wallMicros()
        for key in Array(udpFlows.keys) { closeUDPFlow(key, wallMicros: wall, reason: nil) }
        for listener in listeners { listener.stopListening() }
        loop.unwatch(tunFD)
        loop.unregister(token)
    }
}

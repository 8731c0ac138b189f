import CTVShims
import FlowTerms
import Proxy
#if canImport(Glibc)
import Glibc
#endif

/// ICMP errors from routers further out, read from an upstream UDP socket's error queue and
/// passed on to the app (issue #7).
///
/// A flow whose datagrams may not be fragmented has `IP_RECVERR` / `IPV6_RECVERR` on (set with
/// its `PMTUDISC_DO` mode, `tv_set_pmtu_mode`). When a router beyond the first hop cannot carry
/// a datagram, its ICMP "fragmentation needed" / "packet too big" reaches tv's socket; the
/// kernel queues it and epoll reports EPOLLERR. Without this the app would learn the MTU only
/// from tv's next EMSGSIZE, one datagram late (and a QUIC stack that sends one probe and waits
/// would learn nothing). ICMP "port unreachable" is passed on the same way (the app's connected
/// socket then reports ECONNREFUSED, as without tv), but only for these flows: a flow that may
/// fragment (IPv4 without DF, or reassembled) has no error queue, and its app waits for a reply.
///
/// The error tv writes for the app is its own copy of the network's: it quotes the app's
/// datagram, not tv's (the app's kernel matches an ICMP error to its socket by the quoted
/// addresses, protocol and ports, and takes the MTU from the ICMP header: Linux icmp_unreach /
/// icmpv6_notify → udp_err; it reads no quoted length or checksum). The error queue hands tv only
/// the part of tv's datagram's payload the router quoted, so the app's headers come from the
/// datagrams the flow sent lately (`SentDatagrams`: their real lengths, a trial's copy having
/// read "MTU 1280" beside a 548-byte quoted packet), else are rebuilt from the five-tuple with
/// lengths counting the quoted bytes. It comes from the router that sent it (`SO_EE_OFFENDER`;
/// the address the app sent to when the server itself sent it, or none was given), and the
/// capture says what it is beside it (`ICMPErrorNote`).
///
/// Which source the app's kernel takes, measured on Linux 6.18 (a UDP socket with PMTUDISC_DO
/// whose routes go to a TUN, a second link holding a "LAN router"; an ICMP fragmentation needed
/// or packet too big for MTU 1280 written into the TUN; IP_MTU read after, and the next
/// 1,400-byte send): from the remote, from a router reached through the TUN, and from the LAN
/// router, all are taken (1500 → 1280, then EMSGSIZE), IPv4 and IPv6, with rp_filter 0 or 2;
/// with rp_filter 1 (strict) only the IPv4 one from the LAN router is dropped (its reverse path
/// is not the TUN). `tv exec`'s namespace routes everything to the TUN, and `--mode tun`
/// loosens a strict rp_filter to 2 while it runs (`HostTunnelClaim`), so the router's address is
/// taken in both.
///
/// A flow that may fragment (IPv4 without DF, or reassembled) has no error queue: the kernel
/// keeps only a hard error for its connected socket, which the next read returns; ECONNREFUSED
/// there is the server's port unreachable (`portUnreachableRead`), passed on quoting the flow's
/// IP and UDP header alone (the app's kernel needs nothing more to find its socket). Without it,
/// such a program waited out its timeout.
///
/// A port unreachable ends the app's exchange at once (its socket reports ECONNREFUSED and a
/// program such as `nc -u` or a resolver's stub exits or closes it), so one that comes before
/// the flow's program lookup has answered is held, as a refused connect's reset is
/// (`EngineHeldFailure.swift`): kept whole in the flow and written once the lookup answers, or
/// after `failedConnectHoldNanos`. Passed on at once, 1 of 3 such flows in a trial read "not
/// known". A path-MTU signal is never held: the app's next datagram depends on it.
extension EngineLoop {
    /// Error-queue entries read per EPOLLERR (the rest come on the next turn: epoll is level-triggered).
    static let errorQueueBatch = 16

    /// EPOLLERR on a UDP flow's upstream socket: read every queued error and write the ICMP error
    /// `UDPPathMTU.action` chooses into the TUN. Entries are never left behind to spin on: if
    /// reading fails other than with EAGAIN, `IP_RECVERR` is switched off, which empties the queue.
    func udpErrorQueue(_ key: UDPFlowKey) {
        guard let flow = udpFlows[key] else { return }
        // A flow the server's port-unreachable failed ends with it (it read "open" and "failed"
        // for the idle minute: a trial); the program's next datagram makes a new flow.
        defer {
            if flow.facts?.status == .failed, udpFlows[key] === flow {
                closeUDPFlow(key, wallMicros: EngineClock.wallMicros(), reason: nil)
            }
        }
        let v6 = key.app.address.isIPv6
        let room = Self.quoteHeaderRoom
        let capacity = room + PacketBuilder.maximumQuote(isIPv6: v6)
        withUnsafeTemporaryAllocation(byteCount: capacity + 256, alignment: 16) { scratch in
            let original = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<capacity])
            let control = UnsafeMutableRawBufferPointer(rebasing: scratch[capacity...])
            for _ in 0..<Self.errorQueueBatch {
                var controlLength = control.count
                let n = tv_recv_errqueue(flow.fd, original.baseAddress! + room, capacity - room, control.baseAddress!, &controlLength)
                if n < 0 {
                    let err = Int32(-n)
                    if err == EAGAIN || err == EWOULDBLOCK { return }
                    if err == EINTR { continue }
                    _ = tv_set_recverr(flow.fd, flow.upstream.address.family, 0)
                    counters.upstreamErrorsIgnored.wrappingAdd(1, ordering: .relaxed)
                    return
                }
                counters.udpErrorQueueRead.wrappingAdd(1, ordering: .relaxed)
                let entry = SocketExtendedError.parse(control: UnsafeRawBufferPointer(rebasing: control[0..<controlLength]))
                let kernel = tv_path_mtu(flow.fd, flow.upstream.address.family)
                let action = UDPPathMTU.action(for: entry, isIPv6: v6, kernelPathMTU: kernel > 0 ? Int(kernel) : nil)
                switch action {
                case .ignore(.local):
                    continue   // tv's own send failed: answered then (signalPathMTU)
                case .ignore:
                    counters.upstreamErrorsIgnored.wrappingAdd(1, ordering: .relaxed)
                    continue
                case .pathTooSmall, .portUnreachable:
                    writeUpstreamError(action, flow: flow, scratch: original, payloadCount: min(Int(n), capacity - room),
                                       offender: entry?.offender)
                case .unsendable:
                    continue   // never read from the queue (`UDPPathMTU.action` does not make it)
                }
            }
        }
    }

    /// Where the quoted payload starts in the scratch buffer `writeUpstreamError` is given: room
    /// before it for the app's headers (`SentDatagrams.headerRoom`).
    static let quoteHeaderRoom = SentDatagrams.headerRoom

    /// Writes `action`'s ICMP error to the app, quoting its datagram: `payloadCount` bytes of its
    /// payload (what the sender quoted) at `quoteHeaderRoom` in `scratch`, behind the headers the
    /// app sent them with (`SentDatagrams`), else headers rebuilt from the five-tuple. It comes
    /// from `offender` (the router or server that sent it; nil: the remote the app addressed).
    private func writeUpstreamError(_ action: UpstreamErrorAction, flow: UDPFlow, scratch: UnsafeMutableRawBufferPointer, payloadCount: Int,
                                    offender: PacketAddress?) {
        let room = Self.quoteHeaderRoom
        let v6 = flow.key.app.address.isIPv6
        let payload = UnsafeRawBufferPointer(rebasing: scratch[room..<(room + payloadCount)])
        var mtu: Int?
        if case .pathTooSmall(let m) = action { mtu = m }
        var start = 0
        let known = flow.sentDatagrams.headers(quoting: payload, largerThan: mtu)
        if let known {
            start = room - known.count
            known.withUnsafeBytes { scratch.baseAddress!.advanced(by: start).copyMemory(from: $0.baseAddress!, byteCount: known.count) }
        } else {
            start = room - (v6 ? 48 : 28)
            guard PacketBuilder.udp(into: UnsafeMutableRawBufferPointer(rebasing: scratch[start...]), source: flow.key.app,
                                    destination: flow.key.remote, payloadCount: payloadCount, identification: 0, dontFragment: true) != nil else {
                counters.upstreamErrorsIgnored.wrappingAdd(1, ordering: .relaxed)
                return
            }
        }
        let quote = UnsafeRawBufferPointer(rebasing: scratch[start..<(room + payloadCount)])
        // The server's own error comes from the address the app sent to (a resolver's from the
        // tunnel's DNS address); a router's from the router.
        let sender = offender.flatMap { $0.isIPv6 == v6 && $0 != flow.upstream.address ? $0 : nil }
        ipIdentification &+= 1
        guard let n = PacketBuilder.icmpError(into: writeBuffer, action: action, original: quote, originalLength: quote.count,
                                              source: sender ?? flow.key.remote.address, identification: ipIdentification) else {
            counters.upstreamErrorsIgnored.wrappingAdd(1, ordering: .relaxed)
            return
        }
        let packet = UnsafeRawBufferPointer(rebasing: writeBuffer[0..<n])
        let comment = recorder == nil ? nil
            : ICMPErrorNote.forwarded(action, isIPv6: v6, from: offender, tvSent: Socket.localAddress(flow.fd).map(PacketEndpoint.init),
                                      upstream: flow.upstream, quotedPayload: payloadCount, lengthsKnown: known != nil)
        if case .portUnreachable = action, flow.isDNS {
            // The quoted datagram's first two bytes are its query's ID (`EngineDNSHold.swift`).
            let id = payloadCount >= 2 ? UInt16(scratch[room]) << 8 | UInt16(scratch[room + 1]) : nil
            dnsRefused(flow, queryID: id, packet: packet, comment: comment)
            return
        }
        if case .portUnreachable = action, flow.awaitsProgram {
            if flow.heldUnreachable == nil {
                flow.heldUnreachable = (Array(packet), comment)
                loop.armTimer(flow.token, at: now + Self.failedConnectHoldNanos)
            } else {
                // The app's later datagram's: the held one already tells its socket.
                counters.upstreamErrorsIgnored.wrappingAdd(1, ordering: .relaxed)
            }
            return
        }
        deliverUpstreamError(action, packet, flow: flow, comment: comment)
    }

    /// tv's socket of `flow`, which has no error queue, read ECONNREFUSED: the server's port
    /// unreachable, passed on quoting the flow's header with no payload; a flow it failed closes.
    func portUnreachableRead(_ flow: UDPFlow) {
        withUnsafeTemporaryAllocation(byteCount: Self.quoteHeaderRoom, alignment: 16) { scratch in
            writeUpstreamError(.portUnreachable, flow: flow, scratch: scratch, payloadCount: 0, offender: nil)
        }
        if flow.facts?.status == .failed, udpFlows[flow.key] === flow {
            closeUDPFlow(flow.key, wallMicros: EngineClock.wallMicros(), reason: nil)
        }
    }

    /// `flow`'s program lookup answered (the sink's callback, through the inbox): a port
    /// unreachable held for it goes now. `id` tells a later flow of the same five-tuple apart.
    func udpProgramLookedUp(_ key: UDPFlowKey, flow id: UInt64) {
        guard let flow = udpFlows[key], flow.facts?.id == id else { return }
        releaseHeldUnreachable(flow)
    }

    /// Ends `flow`'s wait for its lookup (answered, its hold timed out, the flow closing): the
    /// held port unreachable is written to the app and fails the flow, which then closes
    /// (unless `closing`: its caller is closing it).
    func releaseHeldUnreachable(_ flow: UDPFlow, closing: Bool = false) {
        flow.awaitsProgram = false
        guard let held = flow.heldUnreachable else { return }
        flow.heldUnreachable = nil
        held.packet.withUnsafeBytes { deliverUpstreamError(.portUnreachable, $0, flow: flow, comment: held.comment) }
        if !closing, flow.facts?.status == .failed, udpFlows[flow.key] === flow {
            closeUDPFlow(flow.key, wallMicros: EngineClock.wallMicros(), reason: nil)
        }
    }

    /// Answers the app's datagram `datagram` (its IP packet as read) that tv could not send on
    /// with `action`'s ICMP error from `remote`, so its socket fails at once rather than waiting
    /// (a trial: UDP to an address tv had no route for was dropped silently). Said on `flow`
    /// when there is one (`errno`: tv's send's error), else captured as `flowID`'s (0: none).
    func answerUnsent(_ datagram: UnsafeRawBufferPointer, from remote: PacketAddress, _ action: UpstreamErrorAction, flow: UDPFlow?,
                      errno: Int32?, flowID: UInt64 = 0) {
        ipIdentification &+= 1
        guard let n = PacketBuilder.icmpError(into: writeBuffer, action: action, original: datagram, originalLength: datagram.count,
                                              source: remote, identification: ipIdentification) else { return }
        let packet = UnsafeRawBufferPointer(rebasing: writeBuffer[0..<n])
        var comment: String?
        if recorder != nil, case .unsendable(let why) = action {
            comment = ICMPErrorNote.ownUnsendable(why, error: errno.map(Errno.init), upstream: flow?.upstream.address ?? remote,
                                                  isIPv6: remote.isIPv6)
        }
        if let flow {
            deliverUpstreamError(action, packet, flow: flow, errno: errno, comment: comment)
        } else {
            capture(packet, flow: flowID, .serverToClient, comment: comment)
            writeTUN(packet)
            counters.unreachableSignals.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Writes the ICMP error `packet` (built by `writeUpstreamError` or `answerUnsent`) to the
    /// app and says it on the flow (`errno`: tv's failed send's, for `.unsendable`); `comment`
    /// goes beside it in the capture.
    private func deliverUpstreamError(_ action: UpstreamErrorAction, _ packet: UnsafeRawBufferPointer, flow: UDPFlow, errno: Int32? = nil,
                                      comment: String? = nil) {
        capture(packet, flow: flow.facts?.id ?? 0, .serverToClient, comment: comment)
        writeTUN(packet)
        if case .pathTooSmall = action {
            counters.pathMTUSignals.wrappingAdd(1, ordering: .relaxed)
        } else if case .unsendable(let why) = action {
            counters.unreachableSignals.wrappingAdd(1, ordering: .relaxed)
            if var facts = flow.facts {
                let failure = ConnectionFailure.unreachable(target: "\(flow.upstream)", .connect(Errno(errno ?? 0)),
                                                            answered: .icmpUnreachable(programSaw: why.programSees(isIPv6: flow.key.app.address.isIPv6)))
                if facts.bytesFromServer == 0 { facts.fail(failure) } else { facts.error = failure.sentence }
                flow.facts = facts
            }
        } else {
            counters.portUnreachableSignals.wrappingAdd(1, ordering: .relaxed)
            // The flow says so (it read ↓ 0 B and no error: a trial): failed when the server
            // never answered otherwise, a note on it when it had.
            if var facts = flow.facts {
                if facts.bytesFromServer == 0 { facts.fail(.portUnreachable) } else { facts.error = ConnectionFailure.portUnreachable.sentence }
                flow.facts = facts
            }
        }
    }
}

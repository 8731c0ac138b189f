import CTVShims
import Proxy
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// UDP and DNS: one connected socket per flow, replies crafted back (tun-nat.md rule 3).
extension EngineLoop {
    /// Seconds a DNS association without pending queries stays open.
    static let dnsIdleNanos: UInt64 = 10_000_000_000
    /// How often an open UDP flow's counts are reported.
    static let updateNanos: UInt64 = 1_000_000_000

    /// - Parameter vnet: the datagram's virtio-net header: with NEEDS_CSUM / DATA_VALID the
    ///   kernel vouches for the checksum (a partial one would not verify), so it is not checked.
    func handleUDP(_ bytes: UnsafeMutableRawBufferPointer, _ packet: IPPacket, vnet: VirtioNetHeader, reassembled: Bool) {
        let header: UDPHeader
        let verify = configuration.verifyChecksums && !vnet.kernelVouchesForChecksum
        switch UDPHeader.parse(UnsafeRawBufferPointer(bytes), packet, verifyChecksum: verify) {
        case .failure(let reason): counters.drop(reason); return
        case .success(let parsed): header = parsed
        }
        let app = PacketEndpoint(packet.source, header.sourcePort)
        let remote = PacketEndpoint(packet.destination, header.destinationPort)
        let datagram = UnsafeRawBufferPointer(rebasing: bytes[0..<min(packet.length, bytes.count)])
        if remote.address.isUnforwardable || remote.port == 0 || app.port == 0 {
            capture(datagram, flow: 0, .clientToServer)
            counters.drop(.refusedDestination)
            return
        }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[header.payloadOffset..<(header.payloadOffset + header.payloadLength)])
        let key = UDPFlowKey(app: app, remote: remote)
        let flow: UDPFlow
        if let existing = udpFlows[key] {
            flow = existing
        } else {
            // Asked of a new flow only, not of every datagram.
            if refusesAsTunnelNetwork(remote) {
                capture(datagram, flow: 0, .clientToServer)
                counters.drop(.tunnelNetwork)
                answerUnsent(datagram, from: remote.address, .unsendable(.prohibited), flow: nil, errno: nil)
                return
            }
            switch openUDPFlow(key, payload: payload) {
            case .opened(let made):
                flow = made
            case .dropped(nil):
                capture(datagram, flow: 0, .clientToServer)
                return
            case .dropped(let (unsendable, err)?):
                datagramUnsent(datagram, key, payload, unsendable, why: .connect(err))
                return
            case let .queryUnsent(resolver, why):
                // The query first, then tv's SERVFAIL, both in its own failed flow (a trial's
                // capture had every answer before its question, and the queries no rows).
                let id = sink == nil ? nil : proxy.allocateFlowID()
                capture(datagram, flow: id ?? 0, .clientToServer)
                let answered = answerServerFailure(key, payload, flow: id ?? 0)
                if let id { recordUnsentQuery(id, key, payload, resolver: resolver, why: why, answerBytes: answered) }
                counters.dnsQueries.wrappingAdd(1, ordering: .relaxed)
                counters.dnsQueriesUnsent.wrappingAdd(1, ordering: .relaxed)
                counters.udpFlows.wrappingAdd(1, ordering: .relaxed)
                // The datagrams the program and tv exchanged, as its row counts them (the exit
                // summary read "0 datagrams up, 0 down" over rows of one each way: a trial).
                counters.udpDatagramsUp.wrappingAdd(1, ordering: .relaxed)
                counters.udpBytesUp.wrappingAdd(UInt64(payload.count), ordering: .relaxed)
                if let answered {
                    counters.udpDatagramsDown.wrappingAdd(1, ordering: .relaxed)
                    counters.udpBytesDown.wrappingAdd(UInt64(answered), ordering: .relaxed)
                }
                return
            }
        }
        let forbid = UDPPathMTU.forbidsFragmentation(isIPv6: packet.isIPv6, dontFragmentBit: Self.dontFragment(bytes), reassembled: reassembled)
        if forbid != flow.forbidsFragmentation {
            _ = tv_set_pmtu_mode(flow.fd, flow.upstream.address.family, forbid ? 1 : 0)
            flow.forbidsFragmentation = forbid
        }
        flow.lastActivity = now
        if flow.isDNS { noteQuery(flow, payload) }
        capture(datagram, flow: flowID(of: flow, message: payload), .clientToServer)
        if flow.quicReader != nil { readQUIC(flow, payload) }
        let n = tv_send_dgram(flow.fd, payload.baseAddress, payload.count)
        if n < 0 {
            let err = errno
            if err == EMSGSIZE && flow.forbidsFragmentation {
                signalPathMTU(flow, original: UnsafeRawBufferPointer(bytes), packet)
                return
            }
            counters.drop(.sendFailed)
            // A DNS query that cannot go waits for its answer's timeout (its own row says so).
            guard !flow.isDNS else { return }
            if err == ECONNREFUSED {
                // An earlier datagram's port unreachable, on a flow without an error queue.
                answerUnsent(datagram, from: remote.address, .portUnreachable, flow: flow, errno: err)
            } else if let unsendable = UnsendableDatagram(errno: err) {
                answerUnsent(datagram, from: remote.address, .unsendable(unsendable), flow: flow, errno: err)
            }
            return
        }
        counters.udpDatagramsUp.wrappingAdd(1, ordering: .relaxed)
        counters.udpBytesUp.wrappingAdd(UInt64(payload.count), ordering: .relaxed)
        // Kept for an ICMP error about it from further out (`SentDatagrams`): only a flow with an
        // error queue can get one.
        if flow.forbidsFragmentation {
            flow.sentDatagrams.note(UnsafeRawBufferPointer(bytes), payloadOffset: header.payloadOffset, payloadLength: header.payloadLength)
        }
        if var facts = flow.facts {
            facts.bytesFromClient += UInt64(payload.count)
            facts.packetsFromClient = (facts.packetsFromClient ?? 0) + 1
            facts.lastActivityMicros = EngineClock.wallMicros()
            flow.facts = facts
        }
    }

    /// The IPv4 DF bit of the packet in `bytes`.
    static func dontFragment(_ bytes: UnsafeMutableRawBufferPointer) -> Bool {
        bytes.count >= 7 && bytes[6] & 0x40 != 0
    }

    /// What opening a UDP association came to.
    private enum UDPOpening {
        case opened(UDPFlow)
        /// Not opened (counted as a drop); when tv's connect failed for a reason about the
        /// destination (`UnsendableDatagram`), that and its error: answered with ICMP and given
        /// a failed flow; else not answered at all.
        case dropped((UnsendableDatagram, Errno)?)
        /// A query to the tunnel's DNS address that could not go to `resolver` (nil: this host has
        /// none) for `why`: tv answers it SERVFAIL, so the program does not wait.
        case queryUnsent(resolver: PacketEndpoint?, why: ConnectionFailure.Unreachable)
    }

    private func openUDPFlow(_ key: UDPFlowKey, payload: UnsafeRawBufferPointer) -> UDPOpening {
        guard udpFlows.count < configuration.maximumUDPFlows else {
            counters.drop(.tableFull)
            return .dropped(nil)
        }
        let upstream: PacketEndpoint
        let toDNSAddress: Bool
        switch DNSAddressRoute(remote: key.remote, configuration: configuration, rotation: resolverIndex) {
        case .asAddressed:
            upstream = key.remote
            toDNSAddress = false
        case .resolver(let resolver):
            upstream = resolver
            toDNSAddress = true
        case .noResolver:
            return .queryUnsent(resolver: nil, why: .noResolver)
        }
        // A failure to reach the resolver is the query's (its own flow); any other, a drop.
        let fd = tv_socket_dgram(upstream.address.family)
        guard fd >= 0 else {
            let err = Errno(errno)
            counters.drop(.sendFailed)
            return toDNSAddress ? .queryUnsent(resolver: upstream, why: .connect(err)) : .dropped(nil)
        }
        if let mark = configuration.mark, tv_set_mark(fd, mark) != 0 {
            let err = Errno(errno)
            close(fd)
            counters.drop(.sendFailed)
            return toDNSAddress ? .queryUnsent(resolver: upstream, why: .mark(err)) : .dropped(nil)
        }
        let rc = upstream.socketAddress.withSockAddr { Glibc.connect(fd, $0, $1) }
        guard rc == 0 else {
            let err = Errno(errno)
            close(fd)
            counters.drop(.sendFailed)
            return toDNSAddress ? .queryUnsent(resolver: upstream, why: .connect(err)) : .dropped(UnsendableDatagram(errno: err.code).map { ($0, err) })
        }
        let flow = UDPFlow(engine: self, key: key, fd: fd, upstream: upstream, isDNS: key.remote.port == 53, now: now)
        if !flow.isDNS, let sink, let id = proxy.allocateFlowID() {
            var facts = FlowFacts(id: id, startMicros: EngineClock.wallMicros(), client: key.app.endpoint)
            facts.transport = .udp
            facts.server = upstream.endpoint
            facts.port = key.remote.port
            // QUIC and DTLS are encrypted (`UDPEncryptionGuess`); tv does not decrypt UDP.
            facts.status = UDPEncryptionGuess.looksEncrypted(payload, port: key.remote.port) ? .encrypted : .notEncrypted
            facts.packetsFromClient = 0
            facts.packetsFromServer = 0
            nameFromDNS(&facts, address: key.remote.address)
            flow.facts = facts
            flow.awaitsProgram = true
            sink.flowOpened(facts) { [inbox] in inbox.post { $0.udpProgramLookedUp(key, flow: id) } }
        }
        if !flow.isDNS { startQUICRead(flow, payload) }
        udpFlows[key] = flow
        flow.token = loop.register(flow)
        loop.watch(fd, token: flow.token, side: 0, events: tv_EPOLLIN, level: true)
        // A DNS association's flows are its queries (`noteQuery`), as the flow list has them.
        if !flow.isDNS { counters.udpFlows.wrappingAdd(1, ordering: .relaxed) }
        return .opened(flow)
    }

    func udpReadable(_ key: UDPFlowKey) {
        guard let flow = udpFlows[key] else { return }
        let room = key.app.address.isIPv6 ? 48 : 28
        let maximum = PacketBuilder.maximumUDPPayload(isIPv6: key.app.address.isIPv6)
        for _ in 0..<64 {
            let n = tv_recv(flow.fd, writeBuffer.baseAddress! + room, maximum)
            if n < 0 {
                let err = errno
                if err == EAGAIN || err == EWOULDBLOCK { return }
                if err == EINTR { continue }
                if err == ECONNREFUSED {
                    // A past datagram's ICMP error, the one hard error tv's socket reports on
                    // its next read. A flow with an error queue (`forbidsFragmentation`) passed
                    // it on from there; for the others this is the only word of it.
                    guard !flow.forbidsFragmentation else { continue }
                    portUnreachableRead(flow)
                    guard udpFlows[key] === flow else { return }
                    continue
                }
                return
            }
            flow.lastActivity = now
            let payload = UnsafeRawBufferPointer(start: writeBuffer.baseAddress! + room, count: n)
            let packetFlow = recorder == nil ? 0 : flowID(of: flow, message: payload)
            var answered: UInt64 = 0
            if flow.isDNS { answered = answer(flow, payload) } else if var facts = flow.facts {
                facts.bytesFromServer += UInt64(n)
                facts.packetsFromServer = (facts.packetsFromServer ?? 0) + 1
                facts.lastActivityMicros = EngineClock.wallMicros()
                flow.facts = facts
            }
            ipIdentification &+= 1
            guard let length = PacketBuilder.udp(into: writeBuffer, source: key.remote, destination: key.app,
                                                 payloadCount: n, identification: ipIdentification) else { continue }
            counters.udpDatagramsDown.wrappingAdd(1, ordering: .relaxed)
            counters.udpBytesDown.wrappingAdd(UInt64(n), ordering: .relaxed)
            if holdsAnswer(flow, query: answered) {
                holdAnswer(flow, query: answered, packet: UnsafeRawBufferPointer(rebasing: writeBuffer[0..<length]))
                continue
            }
            capture(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<length]), flow: packetFlow, .serverToClient)
            writeTUN(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<length]))
        }
    }

    /// The upstream path cannot carry the app's datagram whole (it may not be fragmented,
    /// `UDPPathMTU`): answer like a router, with ICMP "fragmentation needed" (RFC 792, RFC 1191
    /// §4) or ICMPv6 "packet too big" (RFC 4443 §3.2) carrying the path MTU, from the remote, so
    /// the app's kernel lowers its path MTU toward it. The datagram is dropped.
    private func signalPathMTU(_ flow: UDPFlow, original: UnsafeRawBufferPointer, _ packet: IPPacket) {
        let mtu = tv_path_mtu(flow.fd, flow.upstream.address.family)
        guard mtu > 0 else { counters.drop(.sendFailed); return }
        ipIdentification &+= 1
        guard let n = PacketBuilder.pathTooSmall(into: writeBuffer, original: original, originalLength: packet.length,
                                                 source: flow.key.remote.address, mtu: Int(mtu), identification: ipIdentification) else {
            counters.drop(.sendFailed)
            return
        }
        let comment = recorder == nil ? nil
            : ICMPErrorNote.ownPathMTU(mtu: Int(mtu), length: packet.length, upstream: flow.upstream, isIPv6: packet.isIPv6)
        capture(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<n]), flow: flow.facts?.id ?? 0, .serverToClient, comment: comment)
        writeTUN(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<n]))
        counters.pathMTUSignals.wrappingAdd(1, ordering: .relaxed)
    }

    func expireUDP(wallMicros: Int64) {
        let idle = UInt64(max(1, configuration.udpIdleTimeout) * 1e9)
        for (key, flow) in udpFlows {
            if flow.isDNS {
                for (id, query) in flow.queries where query.deadline <= now {
                    flow.queries[id] = nil
                    flow.queriesAwaitingProgram.remove(query.facts.id)
                    counters.dnsTimeouts.wrappingAdd(1, ordering: .relaxed)
                    resolverIndex &+= 1   // try the next resolver for new associations
                    report(query.facts, wallMicros: wallMicros, error: DNSQueryEnd.unanswered(seconds: Int(configuration.dnsTimeout), otherAnswers: query.otherAnswers))
                }
                if flow.queries.isEmpty && now &- flow.lastActivity >= Self.dnsIdleNanos {
                    closeUDPFlow(key, wallMicros: wallMicros, reason: nil)
                }
            } else if now &- flow.lastActivity >= idle {
                closeUDPFlow(key, wallMicros: wallMicros, reason: nil)
            } else if flow.quicReader != nil {
                expireQUIC(flow)  // reported at once if that names it
            } else if flow.changed, now &- flow.reportedAt >= Self.updateNanos, let facts = flow.facts {
                // A long association shows its bytes while it lasts, at most once a second.
                sink?.flowUpdated(facts)
                flow.changed = false
                flow.reportedAt = now
            }
        }
    }

    func closeUDPFlow(_ key: UDPFlowKey, wallMicros: Int64, reason: String?) {
        guard let flow = udpFlows.removeValue(forKey: key) else { return }
        // A held port unreachable is the flow's end: said to the app before the socket goes.
        if flow.heldUnreachable != nil { releaseHeldUnreachable(flow, closing: true) }
        releaseAllAnswers(flow)
        loop.unregister(flow.token)
        loop.unwatch(flow.fd)
        close(flow.fd)
        abandonQUIC(flow)
        // A UDP association has no close: it ended with its last datagram, not when the idle
        // timer or the session's end found it (a 1 ms exchange read 60 s: a trial).
        if let facts = flow.facts { report(facts, wallMicros: max(facts.startMicros, min(wallMicros, facts.lastActivityMicros)), error: reason) }
        for (_, query) in flow.queries { report(query.facts, wallMicros: wallMicros, error: reason ?? "tv stopped before the answer came") }
    }

    private func report(_ facts: FlowFacts, wallMicros: Int64, error: String?) {
        guard sink != nil, facts.id != 0 else { return }
        var f = facts
        f.durationMicros = wallMicros - f.startMicros
        if let error { f.error = error }
        closed(f)
    }

    /// A UDP flow or DNS query ended: its row closed, and counted with the proxy's closed flows,
    /// so `tv status`'s `closed`, `tv top` and the metrics count what the flow list shows (a
    /// trial's status left out every UDP and DNS flow).
    func closed(_ facts: FlowFacts) {
        sink?.flowClosed(facts)
        proxy.frontEndClosed(facts.status)
    }
}

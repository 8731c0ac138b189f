import Wire
import CTVShims
import Proxy
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// TCP: the rewrite rules of tun-nat.md, connect-first, the accept and the hand-over.
extension EngineLoop {
    /// The listener endpoint `C:L` of a family, nil when that family is not served.
    func listenerEndpoint(isIPv6: Bool) -> PacketEndpoint? {
        if isIPv6 {
            guard let address = plan.address6, let l6 = configuration.listener6 else { return nil }
            return PacketEndpoint(address, l6.port)
        }
        return PacketEndpoint(plan.address4, configuration.listener4.port)
    }

    /// - Parameter vnet: the segment's virtio-net header: kept on what is forwarded; its
    ///   NEEDS_CSUM says the checksum is partial (rewritten as such, never verified).
    func handleTCP(_ bytes: UnsafeMutableRawBufferPointer, _ packet: IPPacket, vnet: VirtioNetHeader) {
        let header: TCPHeader
        switch TCPHeader.parse(UnsafeRawBufferPointer(bytes), packet, verifyChecksum: false) {
        case .failure(let reason): counters.drop(reason); return
        case .success(let parsed): header = parsed
        }
        // The checksum is verified before the engine acts on a segment, not before it only
        // forwards one (TCPChecksumPolicy): true when the segment may not go on (counted).
        let verify = configuration.verifyChecksums
        let vouched = vnet.kernelVouchesForChecksum
        let partial = vnet.needsChecksum
        func badChecksum(_ action: TCPChecksumPolicy.Action) -> Bool {
            guard verify, TCPChecksumPolicy.mustVerify(flags: header.flags, action: action, kernelVouches: vouched),
                  !TCPHeader.checksumIsValid(UnsafeRawBufferPointer(bytes), packet) else { return false }
            counters.drop(.badChecksum)
            return true
        }
        let source = PacketEndpoint(packet.source, header.sourcePort)
        let destination = PacketEndpoint(packet.destination, header.destinationPort)
        let segment = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<packet.length])
        guard let listener = listenerEndpoint(isIPv6: packet.isIPv6) else {
            capture(UnsafeRawBufferPointer(segment), flow: 0, .clientToServer)
            if badChecksum(.act) { return }
            counters.drop(.refusedDestination)
            sendReset(answering: header, from: destination, to: source)
            return
        }
        // Rule 1: the listener to a fake peer → the real remote to the app.
        if source == listener, nat.isFake(destination) {
            guard let entry = nat.reverse(fake: destination) else {
                if badChecksum(.act) { return }
                counters.drop(.unknownFakeEndpoint)
                return
            }
            if badChecksum(.forward) { return }
            nat.note(entry.id, fromApp: false, flags: header.flags, now: now)
            PacketRewriter.rewriteTCP(segment, packet, source: entry.remote, destination: entry.app, checksumIsPartial: partial)
            capture(UnsafeRawBufferPointer(segment), flow: entry.flowID, .serverToClient)
            writeTUN(UnsafeRawBufferPointer(segment), header: vnet)
            return
        }

        // Rule 2: the app to a remote → the fake peer to the listener. What the app sent is
        // captured as it sent it, before the rewrite.
        if header.isConnectionRequest {
            if badChecksum(.act) { return }
            connectionRequest(segment, packet, header, vnet: vnet, app: source, remote: destination, listener: listener)
            return
        }
        guard let entry = nat.forward(app: source, remote: destination), entry.state != .connecting else {
            capture(UnsafeRawBufferPointer(segment), flow: nat.forward(app: source, remote: destination)?.flowID ?? 0, .clientToServer)
            if badChecksum(.act) { return }
            counters.drop(.noConnection)
            if let connecting = nat.forward(app: source, remote: destination) {
                // The app gave up while the upstream connect was still going: so do we.
                if header.isRST {
                    programLeft(connecting, reset: true)
                    nat.remove(connecting.id, now: now)
                }
            } else {
                sendReset(answering: header, from: destination, to: source)
            }
            return
        }
        capture(UnsafeRawBufferPointer(segment), flow: entry.flowID, .clientToServer)
        if badChecksum(.forward) { return }
        nat.note(entry.id, fromApp: true, flags: header.flags, now: now)
        PacketRewriter.rewriteTCP(segment, packet, source: entry.fake, destination: listener, checksumIsPartial: partial)
        writeTUN(UnsafeRawBufferPointer(segment), header: vnet)
        // A reset before tv's listener accepted the connection: the program gave up its connect
        // while tv's was going (its socket closed in SYN-SENT sends nothing), and its kernel
        // answered the listener's SYN-ACK so. tv's completed upstream goes at once, with a reset
        // (nothing was sent on it), not at the entry's linger 10 s later (a trial's server held
        // tv's idle connection ~10 s, and the flow read 11.6 s "while tv was connecting").
        if header.isRST, readyUpstreams[entry.id] != nil { programLeft(entry, reset: true) }
    }

    /// Whether `remote` is in the TUN's own networks and refused there (`PacketDrop.tunnelNetwork`;
    /// the DNS address tv answers is not).
    func refusesAsTunnelNetwork(_ remote: PacketEndpoint) -> Bool {
        guard configuration.refusesTunnelNetwork, plan.holds(remote.address) else { return false }
        if configuration.servesDNSAddress, remote.port == 53, remote.address == plan.dns4 || remote.address == plan.dns6 { return false }
        return true
    }

    /// A SYN from the app: connect upstream first (tun-nat.md "Connect-first").
    private func connectionRequest(_ segment: UnsafeMutableRawBufferPointer, _ packet: IPPacket, _ header: TCPHeader,
                                   vnet: VirtioNetHeader, app: PacketEndpoint, remote: PacketEndpoint, listener: PacketEndpoint) {
        if remote.address.isUnforwardable || remote.port == 0 || refusesAsTunnelNetwork(remote) {
            capture(UnsafeRawBufferPointer(segment), flow: 0, .clientToServer)
            counters.drop(remote.address.isUnforwardable || remote.port == 0 ? .refusedDestination : .tunnelNetwork)
            sendReset(answering: header, from: remote, to: app)
            return
        }
        // Room for one more connection is asked before anything is connected (connect-first):
        // the proxy's open ones and this engine's own under way count against its cap.
        let refusal = proxy.refusal(starting: pendingConnects.count + readyUpstreams.count)
        switch nat.appSYN(app: app, remote: remote, isn: header.sequenceNumber, now: now, room: refusal == nil) {
        case .retransmitWhileConnecting:
            let entry = nat.forward(app: app, remote: remote)
            capture(UnsafeRawBufferPointer(segment), flow: entry?.flowID ?? 0, .clientToServer)
            counters.drop(.synRetransmit)
            // The program still waits: tv's connect goes on (`SYNRetrySchedule`).
            if let entry { pendingConnects[entry.id]?.retries.resent(at: now) }
        case .forward(let entry):
            capture(UnsafeRawBufferPointer(segment), flow: entry.flowID, .clientToServer)
            PacketRewriter.rewriteTCP(segment, packet, source: entry.fake, destination: listener, checksumIsPartial: vnet.needsChecksum)
            writeTUN(UnsafeRawBufferPointer(segment), header: vnet)
        case .full(let replaced):
            capture(UnsafeRawBufferPointer(segment), flow: 0, .clientToServer)
            counters.drop(.tableFull)
            if let replaced {
                counters.tcpTupleReused.wrappingAdd(1, ordering: .relaxed)
                programLeft(replaced, reset: false)
            }
            sendReset(answering: header, from: remote, to: app)
        case .failedAgain(let flowID, let answer):
            // The failed connect's answer again (nothing when the server never answered tv): a
            // reset after tv's host unreachable would make the program read ECONNREFUSED.
            capture(UnsafeRawBufferPointer(segment), flow: flowID, .clientToServer)
            counters.drop(.synRetransmit)
            answerFailedSYN(answer, syn: UnsafeRawBufferPointer(segment), app: app, remote: remote, isn: header.sequenceNumber,
                            flow: flowID) { type, code, v6 in
                ICMPErrorNote.ownConnectAnswerAgain(type: type, code: code, upstream: remote, isIPv6: v6)
            }
        case .noRoom:
            capture(UnsafeRawBufferPointer(segment), flow: 0, .clientToServer)
            if case .atConnectionCap = refusal {
                // Dropped, as an overloaded server drops it (`PacketDrop.connectionCap`).
                counters.drop(.connectionCap)
                proxy.synDroppedAtCap()
            } else {
                counters.drop(.proxyStopping)
                sendReset(answering: header, from: remote, to: app)
            }
        case .connectFirst(var entry, let replaced):
            // The flow id is given here, so the SYN and every later packet carry the one the
            // proxy's flow row gets (`ProxyServer.adopt(flowID:)`).
            entry.flowID = proxy.allocateFlowID() ?? 0
            nat.assignFlowID(entry.id, entry.flowID)
            capture(UnsafeRawBufferPointer(segment), flow: entry.flowID, .clientToServer)
            if let replaced {
                counters.tcpTupleReused.wrappingAdd(1, ordering: .relaxed)
                programLeft(replaced, reset: false)
            }
            startConnect(entry, syn: Array(UnsafeRawBufferPointer(segment)), synHeader: vnet)
        }
    }

    private func startConnect(_ entry: TCPNATTable.Entry, syn: [UInt8], synHeader: VirtioNetHeader) {
        let started = EngineClock.wallMicros()
        let target: PacketEndpoint
        switch DNSAddressRoute(remote: entry.remote, configuration: configuration, rotation: resolverIndex) {
        case .asAddressed: target = entry.remote
        case .resolver(let resolver): target = resolver
        case .noResolver:
            failConnect(entry, .noAddress, startMicros: started, announced: false, syn: syn)
            return
        }
        let fd: Int32
        switch Socket.startConnect(to: target.socketAddress, mark: configuration.mark) {
        case .failure(.mark(let err)):
            failConnect(entry, .mark(err), startMicros: started, announced: false, syn: syn)
            return
        case .failure(let failure):
            failConnect(entry, .connect(failure.errno), startMicros: started, announced: false, syn: syn)
            return
        case .success(let (connected, done)):
            if done {
                connectSucceeded(entry, fd: connected, syn: syn, synHeader: synHeader, startMicros: started, announced: false)
                return
            }
            fd = connected
        }
        let pending = PendingConnect(engine: self, fd: fd, entry: entry, syn: syn, synHeader: synHeader,
                                     deadline: configuration.connectTimeout.map { now + UInt64(max(0.1, $0) * 1e9) }, startMicros: started,
                                     firstSYNAt: now)
        pending.token = loop.register(pending)
        pendingConnects[entry.id] = pending
        // One-shot: after its one event the socket stays in the set, disarmed, until it is closed
        // (closing removes it), so no EPOLL_CTL_DEL per connection.
        loop.watch(fd, token: pending.token, side: 0, events: tv_EPOLLOUT | tv_EPOLLERR | tv_EPOLLHUP | tv_EPOLLONESHOT, level: true)
    }

    func connectFinished(_ id: UInt64, bits: UInt32) {
        guard let pending = pendingConnects.removeValue(forKey: id) else { return }
        loop.unregister(pending.token)
        // EPOLLOUT alone means the connect succeeded; with ERR/HUP, SO_ERROR says why it failed.
        let err = bits & (tv_EPOLLERR | tv_EPOLLHUP) == 0 && bits & tv_EPOLLOUT != 0 ? 0 : tv_socket_error(pending.fd)
        if err == 0 {
            connectSucceeded(pending.entry, fd: pending.fd, syn: pending.syn, synHeader: pending.synHeader,
                             startMicros: pending.startMicros, announced: pending.announced)
        } else {
            close(pending.fd)
            failConnect(pending.entry, .connect(Errno(err)), startMicros: pending.startMicros, announced: pending.announced,
                        syn: pending.syn)
        }
    }

    private func connectSucceeded(_ entry: TCPNATTable.Entry, fd: Int32, syn: [UInt8], synHeader: VirtioNetHeader, startMicros: Int64,
                                  announced: Bool) {
        guard nat.entry(entry.id) != nil, let listener = listenerEndpoint(isIPv6: entry.app.address.isIPv6) else {
            close(fd)
            return
        }
        nat.connected(entry.id)
        readyUpstreams[entry.id] = ReadyUpstream(fd: fd, deadline: now + Self.acceptWaitNanos, startMicros: startMicros, announced: announced)
        var copy = syn
        copy.withUnsafeMutableBytes { raw in
            guard case .success(let packet) = PacketParser.parse(UnsafeRawBufferPointer(raw)) else { return }
            PacketRewriter.rewriteTCP(raw, packet, source: entry.fake, destination: listener, checksumIsPartial: synHeader.needsChecksum)
            writeTUN(UnsafeRawBufferPointer(raw), header: synHeader)
        }
        counters.tcpRedirected.wrappingAdd(1, ordering: .relaxed)
    }

    /// The upstream connect failed or timed out: the app is answered as `FailedConnectAnswer`
    /// chooses (a refusal, tv's own failures: `RST|ACK`, seq 0, ack ISN+1, from R:r, so it reports
    /// "connection refused"; no route, host unreachable, a firewall: ICMP destination unreachable
    /// from R quoting `syn`, so it reports the error tv's connect got; no answer from the server:
    /// nothing, and its retransmissions nothing either), and a failed flow is recorded.
    /// - Parameter syn: the app's SYN as it sent it (its IP header first), quoted by the ICMP.
    func connectFailed(_ entry: TCPNATTable.Entry, _ why: ConnectionFailure.Unreachable, startMicros: Int64, announced: Bool = false,
                       syn: [UInt8]) {
        let chosen = FailedConnectAnswer.choose(why, isIPv6: entry.app.address.isIPv6)
        let answer = syn.withUnsafeBytes {
            answerFailedSYN(chosen, syn: $0, app: entry.app, remote: entry.remote, isn: entry.isn, flow: entry.flowID) { type, code, v6 in
                guard case .connect(let err) = why else { return nil }
                return ICMPErrorNote.ownConnectAnswer(type: type, code: code, error: err, upstream: entry.remote, isIPv6: v6)
            }
        }
        // Its retransmissions get the same answer (`SYNDecision.failedAgain`).
        nat.fail(entry.id, now: now, answer: answer)
        counters.tcpConnectFailed.wrappingAdd(1, ordering: .relaxed)
        // The flow says what the program saw (ECONNREFUSED, the ICMP's error, or nothing) beside tv's own error.
        recordUnadopted(entry, .unreachable(target: "\(entry.remote)", why, answered: answer.clientAnswer), startMicros: startMicros,
                        announced: announced)
    }

    /// Gives the program's SYN `syn` (its IP header first; `app` → `remote`, sequence `isn`) of
    /// flow `flow` the answer of a failed connect: an `RST|ACK` acknowledging it, an ICMP or
    /// ICMPv6 destination unreachable quoting it (captured with `comment(type, code, isIPv6)`
    /// when recording), or nothing.
    /// - Returns: the answer given: `.reset` for an `.unreachable` whose SYN is not an IP packet
    ///   of the app's family (never read so; no ICMP can quote it).
    @discardableResult
    func answerFailedSYN(_ answer: FailedConnectAnswer, syn: UnsafeRawBufferPointer, app: PacketEndpoint, remote: PacketEndpoint,
                         isn: UInt32, flow: UInt64, comment: (UInt8, UInt8, Bool) -> String?) -> FailedConnectAnswer {
        let v6 = app.address.isIPv6
        var given = answer
        var n: Int?
        switch answer {
        case .nothing:
            return .nothing
        case .unreachable(let code, _):
            ipIdentification &+= 1
            n = PacketBuilder.icmpError(into: writeBuffer, type: v6 ? 1 : 3, code: code, word: 0, original: syn, originalLength: syn.count,
                                        source: remote.address, identification: ipIdentification)
            if n == nil { given = .reset }
        case .reset:
            break
        }
        let length = n ?? PacketBuilder.tcp(into: writeBuffer, source: remote, destination: app, sequence: 0,
                                            acknowledgment: isn &+ 1, flags: TCPFlags.rst | TCPFlags.ack)
        var note: String?
        if recorder != nil, case .unreachable(let code, _) = given { note = comment(v6 ? 1 : 3, code, v6) }
        capture(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<length]), flow: flow, .serverToClient, comment: note)
        writeTUN(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<length]))
        if n == nil { counters.tcpResetsSent.wrappingAdd(1, ordering: .relaxed) }
        return given
    }

    /// What `discardUpstream` gave up.
    struct DiscardedUpstream {
        /// When that connect started (µs since the epoch): the flow's start.
        let startMicros: Int64
        /// Its flow was reported opened.
        let announced: Bool
        /// The connect had completed (the socket waited for its accept); false: it was still
        /// going (closing it cancelled it: a socket in SYN-SENT sends nothing), or had failed.
        let connected: Bool
    }

    /// Closes whatever upstream socket entry `id` still holds (pending or waiting for its accept).
    /// - Parameter reset: a connected socket is closed with a reset (SO_LINGER 0) rather than a
    ///   FIN: nothing was sent on it, and its program reset its side.
    /// - Returns: what it gave up; nil when the entry held nothing (its connection is the
    ///   proxy's, or it had already failed and been recorded).
    @discardableResult
    func discardUpstream(_ id: UInt64, reset: Bool = false) -> DiscardedUpstream? {
        var gone: DiscardedUpstream?
        if let held = heldFailures.removeValue(forKey: id) {
            loop.unregister(held.token)
            gone = DiscardedUpstream(startMicros: held.startMicros, announced: true, connected: false)
        }
        if let pending = pendingConnects.removeValue(forKey: id) {
            loop.unregister(pending.token)
            close(pending.fd)
            gone = DiscardedUpstream(startMicros: pending.startMicros, announced: pending.announced, connected: false)
        }
        if let ready = readyUpstreams.removeValue(forKey: id) {
            if reset { Socket.reset(ready.fd) } else { close(ready.fd) }
            gone = DiscardedUpstream(startMicros: ready.startMicros, announced: ready.announced, connected: true)
        }
        return gone
    }

    /// Gives up `entry`'s upstream socket, if it still holds one, and records its flow as failed
    /// for `why` (`recordUnadopted`): a connection that never reached the proxy.
    func abandon(_ entry: TCPNATTable.Entry, _ why: ConnectionFailure) {
        guard let gone = discardUpstream(entry.id) else { return }
        recordUnadopted(entry, why, startMicros: gone.startMicros, announced: gone.announced)
    }

    /// The program left `entry` before its connection reached the proxy (`reset`: it reset it;
    /// else it went silent, or reused the four-tuple): tv's upstream goes the same way at once,
    /// a connect under way cancelled, a completed one reset or closed, and the flow says which
    /// (`ConnectionFailure.Moment.whileConnecting` / `.afterServerConnected`; `.stoppedResendingSYN`
    /// when `stoppedResendingSYN`: all tv saw was that its SYN retransmissions stopped).
    func programLeft(_ entry: TCPNATTable.Entry, reset: Bool, stoppedResendingSYN: Bool = false) {
        guard let gone = discardUpstream(entry.id, reset: reset) else { return }
        let moment: ConnectionFailure.Moment = gone.connected ? .afterServerConnected : stoppedResendingSYN ? .stoppedResendingSYN : .whileConnecting
        recordUnadopted(entry, .clientGone(reset: reset, moment), startMicros: gone.startMicros, announced: gone.announced)
    }

    /// Records the failed flow of a connection that never reached the proxy (its upstream
    /// connect failed, or the program or tv gave up first). Its id was given at the SYN and its
    /// captured packets carry it, so it gets its row: without one, the id was never used as far
    /// as the history knew, and a later session gave it to another flow, whose packet list then
    /// showed these packets (a new-user trial).
    /// - Parameter announced: its flow was reported opened while it connected (only closed here).
    func recordUnadopted(_ entry: TCPNATTable.Entry, _ failure: ConnectionFailure, startMicros: Int64, announced: Bool = false) {
        guard let sink, var facts = unadoptedFacts(entry, startMicros: startMicros) else { return }
        let wall = EngineClock.wallMicros()
        facts.fail(failure)
        facts.lastActivityMicros = wall
        facts.durationMicros = wall - startMicros
        if !announced { sink.flowOpened(facts) }
        sink.flowClosed(facts)
        proxy.frontEndClosed(facts.status)
    }

    /// The facts of a connection the proxy does not have (yet): its id (given at the SYN, else a
    /// new one), the program's address, the server and the name DNS gave it; nil without a sink
    /// or an id.
    func unadoptedFacts(_ entry: TCPNATTable.Entry, startMicros: Int64) -> FlowFacts? {
        guard sink != nil, let id = entry.flowID != 0 ? entry.flowID : proxy.allocateFlowID() else { return nil }
        var facts = FlowFacts(id: id, startMicros: startMicros, client: entry.app.endpoint)
        facts.server = entry.remote.endpoint
        facts.port = entry.remote.port
        nameFromDNS(&facts, address: entry.remote.address)
        noteServerAsked(&facts, entry.remote)
        return facts
    }

    /// Answers `header` with a reset `from` → `to` (none for a reset), captured as part of `flow`
    /// (0: none).
    func sendReset(answering header: TCPHeader, from: PacketEndpoint, to: PacketEndpoint, flow: UInt64 = 0) {
        guard !header.isRST else { return }
        let n = PacketBuilder.reset(into: writeBuffer, answering: header, from: from, to: to)
        capture(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<n]), flow: flow, .serverToClient)
        writeTUN(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<n]))
        counters.tcpResetsSent.wrappingAdd(1, ordering: .relaxed)
    }

    /// A client accepted on a listener (`Listener`): its peer must be a fake endpoint with an
    /// entry and a connected upstream; the pair goes to the proxy. Anything else is reset
    /// (tun-nat.md "Listener exposure").
    func accepted(_ client: Int32, peer storage: UnsafeRawPointer) {
        syncClock()
        guard let address = SocketAddress(storage: storage), case let peer = PacketEndpoint(address),
              let entry = nat.reverse(fake: peer),
              let upstream = readyUpstreams.removeValue(forKey: entry.id) else {
            Socket.reset(client)
            counters.tcpAcceptRefused.wrappingAdd(1, ordering: .relaxed)
            return
        }
        // Named after the address's live DNS names unless the connection announces its own (SNI).
        let names = namesFromDNS(for: entry.remote.address)
        let destination = OriginalDestination(host: entry.remote.address.description, port: entry.remote.port, origin: .none,
                                              inferredNames: names,
                                              dnsServerAsked: DNSServerAsked(remote: entry.remote, configuration: configuration))
        // accept4(SOCK_NONBLOCK) (`Listener`): the proxy need not fcntl it.
        // Rare since room is asked at the SYN (`connectionRequest`): another front end's connections.
        if let refusal = proxy.adopt(clientFD: client, client: entry.app.socketAddress, destination: destination, upstreamFD: upstream.fd,
                                     clientIsNonBlocking: true, flowID: entry.flowID == 0 ? nil : entry.flowID, flowAnnounced: upstream.announced) {
            switch refusal {
            case .atConnectionCap: counters.tcpNotAdoptedAtCap.wrappingAdd(1, ordering: .relaxed)
            case .stopping: counters.tcpNotAdoptedStopping.wrappingAdd(1, ordering: .relaxed)
            }
            // The proxy reset both sockets; the flow (its id on the captured packets) still ends.
            recordUnadopted(entry, .notAdopted(refusal), startMicros: upstream.startMicros, announced: upstream.announced)
        } else {
            counters.tcpAdopted.wrappingAdd(1, ordering: .relaxed)
        }
    }
}

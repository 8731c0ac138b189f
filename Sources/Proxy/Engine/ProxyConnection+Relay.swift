import CTVShims
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// The data phase: bytes both ways, copied through the loop's buffer or spliced, each burst told
/// to the machine (totals, first client data, the ServerHello) and recorded when the machine's
/// relay plan says so; a failed leg or both sides closed end it (`ConnectionMachine`'s
/// `.relayEnded`). Idle TLS legs give OpenSSL's buffers back (`IdleBufferPolicy`).
extension ProxyConnection {
    /// Pass-through bytes are spliced (splice(2) through a pipe, no copy into user space) once a
    /// direction has carried this much: short exchanges are cheaper with one read and one write,
    /// and an idle connection should not hold two extra descriptors.
    static let spliceAfterBytes = 256 * 1024

    func startRelay() {
        guard let up = upstream else { return enqueue(.failed(.internalError("relay without a server leg"))) }
        lastActivity = loop.now
        // Edges seen during the control phase are not repeated: start as if both were ready.
        client.readable = true
        client.writable = true
        up.readable = true
        up.writable = true
        // The handshakes may have left read buffers behind.
        if client.tls != nil || up.tls != nil { buffersMayBeHeld = true }
        tellRecorderInspectedFlowBegan()
        rearm()
        relay()
    }

    /// A decrypted relay tells the recorder the flow's two ends before its first chunk (the
    /// decrypted capture rebuilds its packets between them).
    private func tellRecorderInspectedFlowBegan() {
        guard case .decrypted? = machine.relay.plan, let recorder = shared.recorder, recorder.isRecording,
              let server = machine.facts.server else { return }
        let facts = machine.facts
        recorder.inspectedFlowBegan(flow: facts.id, client: FlowEnds.End(address: facts.client.address, port: facts.client.port),
                                    server: FlowEnds.End(address: server.address, port: server.port), startMicros: facts.startMicros)
    }

    /// Moves what can move both ways; ends when both directions are done.
    func relay() {
        guard !released, machine.phase.io == .relay, let up = upstream else { return }
        let moreUp = clientHeld ? dropHeldClientBytes(toward: up) : pump(from: client, to: up, direction: .clientToServer)
        guard !released else { return }
        let moreDown = pump(from: up, to: client, direction: .serverToClient)
        guard !released else { return }
        noteClientDrained()
        if client.readClosed && up.readClosed && up.writeClosed && client.writeClosed && !client.hasUnsent && !up.hasUnsent {
            return end(nil)
        }
        // A head held toward the server while reading stopped on the server's bytes (a 101)
        // goes on at the next turn, not at the client's next bytes.
        let stale = !heldTowardServer.isEmpty && exchanges?.holdsHead(.clientToServer) != true
        if moreUp || moreDown || stale { loop.runAgain(token) }
    }

    /// The relay is over: `failure` nil when both sides closed in order; a reset is carried on
    /// as a reset.
    private func end(_ failure: ConnectionFailure?, reset: Bool = false) {
        feed(.relayEnded(.init(failure: failure, reset: reset, atMicros: loop.wallNow)))
    }

    /// A leg failed while reading (`source` side) or sending.
    private func readFailed(_ direction: Direction, reset: Bool, _ failure: LegFailure) {
        end(.read(from: direction.source, reset: reset, failure), reset: reset)
    }

    private func sendFailed(_ direction: Direction, reset: Bool, _ failure: LegFailure) {
        end(.send(to: direction.sink, failure), reset: reset)
    }

    /// Arms the timer that tells bytes moved since the flow's last report once the relay has
    /// been quiet for the report interval (`.progressQuiet`); once until it fires.
    private func armProgress() {
        progressArmed = true
        rearm()
    }

    /// Marks the TLS legs as possibly holding buffers and arms the quiet timer (once per quiet
    /// to busy transition).
    private func noteTLSActivity() {
        guard client.tls != nil || upstream?.tls != nil else { return }
        buffersMayBeHeld = true
        bufferRefusedAt = 0
        rearm()
    }

    /// The quiet timer: gives each TLS leg's buffers back when the policy allows (and tells the
    /// loop's `HeapTrimmer`, which returns the freed pages to the kernel after a wave of them); a
    /// leg it must leave is tried again a second later while the connection stays idle. (Called after
    /// every burst instead, `SSL_free_buffers` cost ~2.7 k instructions per h1 keep-alive
    /// request, ~6 %, even when it freed nothing; callgrind.)
    func releaseIdleBuffers() {
        buffersMayBeHeld = false
        bufferRefusedAt = 0
        for leg in [client, upstream] {
            guard let leg, let tls = leg.tls else { continue }
            let state = IdleBufferPolicy.LegState(
                readable: leg.readable, tlsPending: tls.hasPending, unsentRecords: tls.unsent,
                stashedPlaintext: leg.hasPending, readClosed: leg.readClosed)
            if IdleBufferPolicy.release(state, quietFor: loop.now &- lastActivity) {
                tls.releaseBuffers()
                loop.heapTrimmer.released()
            } else {
                buffersMayBeHeld = true
                bufferRefusedAt = loop.now
            }
        }
        // The HTTP/1 exchange reader goes with them when no exchange is open.
        exchanges?.releaseIdle()
        if completedInFlight.isEmpty && completedInFlight.capacity > 0 { completedInFlight = [] }
    }

    /// One direction. Returns true when it stopped only for fairness (more may be readable).
    private func pump(from source: Leg, to sink: Leg, direction: Direction) -> Bool {
        // A head held while reading went on, which reading no longer holds: it goes first.
        _ = releaseStaleHeld(direction, to: sink)
        // Bytes left over from a short write go first, and the pipe is chosen as soon as none
        // are left (choosing before this flush skipped the pipe at every turn that began with
        // bytes pending).
        if sink.pipe == nil && (sink.hasPending || sink.tls != nil) {
            switch sink.flush() {
            case .drained: break
            case .blocked: return false
            case let .failed(reset, text): sendFailed(direction, reset: reset, text); return false
            }
        }
        if sink.pipe != nil || (machine.relay.spliceAllowed && sink.copiedToward >= Self.spliceAfterBytes && !sink.hasPending && sink.openPipe()) {
            return splicePump(from: source, to: sink, direction: direction)
        }
        defer {
            // Send what the burst gathered (records of a TLS sink), once.
            if !released, sink.tls != nil, case let .failed(reset, text) = sink.flushRecords() {
                sendFailed(direction, reset: reset, text)
            }
        }
        var rounds = 0
        while !source.readClosed {
            let tlsBuffered = source.tls?.hasPending ?? false
            guard source.readable || tlsBuffered else { break }
            if rounds == 16 { return true }
            rounds += 1
            var result = source.read(into: buffer)
            // What a coalescing read met after the first record (an EOF or failure to act on once
            // the bytes before it are written).
            var after: Leg.ReadResult?
            if case .bytes(var n) = result, let tls = source.tls {
                // Records OpenSSL already holds (they came in with the same socket read) join this
                // chunk, so one write carries them: one record and one syscall instead of one per
                // small record (h2 frames), for us and for the peer that reads them.
                while tls.hasPending && buffer.count - n >= 16_384 {
                    let next = source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[n...]))
                    if case .bytes(let more) = next { n += more } else { after = next; break }
                }
                result = .bytes(n)
            }
            if case .eof = after { source.readClosed = true }
            switch result {
            case .bytes(let n):
                // Bytes tv cannot follow: what came before them goes on, they do not; the
                // machine answers 400 or 502, resets or closes (`ExchangeReader.Stop.refused`).
                // Refused while earlier requests wait for their responses (`awaitsResponses`):
                // the same, and the machine holds the client until it answers.
                if let refusal = moved(n, direction) {
                    // A head held from earlier bursts goes on only when something after it does
                    // (it ended, whole, before the refused bytes); refused itself, it never does.
                    let passing = min(refusal.passing, n)
                    if passing > 0 { passHeld(direction, to: sink) } else { setHeld(direction, []) }
                    passOn(UnsafeRawBufferPointer(rebasing: buffer[0..<passing]), to: sink)
                    feed(.exchangeRefused(refusal))
                    return false
                }
                // A head part way at the burst's end is held back from where it began until it
                // is whole (`ExchangeReader.heldHeadStart`); what was held goes first.
                let goes = exchanges?.heldHeadStart.map { min($0, n) } ?? n
                passHeld(direction, to: sink)
                if goes < n { appendHeld(direction, UnsafeRawBufferPointer(rebasing: buffer[goes..<n])) }
                if goes == 0 || sink.hasPending {
                    // Nothing of the burst goes now, or a short write of the held head left
                    // bytes waiting: what goes waits behind them.
                    if goes > 0 { sink.stash(UnsafeRawBufferPointer(rebasing: buffer[0..<goes])) }
                    if case let .failed(reset, text) = after {
                        readFailed(direction, reset: reset, text)
                        return false
                    }
                    if sink.hasPending { return false }
                    continue
                }
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<goes])
                if machine.relay.spliceAllowed { sink.copiedToward &+= n }
                let split = direction == .serverToClient ? exchanges?.takeResponseSplit() : nil
                let written = split.map { writeApart(chunk, at: $0, to: sink) } ?? sink.write(chunk)
                if case let .failed(reset, text) = after {
                    readFailed(direction, reset: reset, text)
                    return false
                }
                switch written {
                case .wrote(let w):
                    if w < goes {
                        sink.stash(UnsafeRawBufferPointer(rebasing: chunk[w...]))
                        return false
                    }
                    // Past the copy threshold with nothing pending: the rest of this burst goes
                    // by splice, not by up to 15 more rounds of the 256 KiB buffer in user space
                    // (a full-suite run spliced only 6.3 to 8.9 of 10 MiB this way).
                    if sink.tls == nil, machine.relay.spliceAllowed, sink.copiedToward >= Self.spliceAfterBytes, sink.openPipe() {
                        return splicePump(from: source, to: sink, direction: direction)
                    }
                    // Enough gathered for one large send: send it now; if the socket is full,
                    // stop reading this side (back-pressure).
                    if let tls = sink.tls, tls.unsent >= 64 * 1024 {
                        switch sink.flushRecords() {
                        case .drained: break
                        case .blocked: return false
                        case let .failed(reset, text):
                            sendFailed(direction, reset: reset, text)
                            return false
                        }
                    }
                case let .failed(reset, text):
                    sendFailed(direction, reset: reset, text)
                    return false
                }
            case .wouldBlock:
                // Drained; the quiet timer (`releaseIdleBuffers`) gives OpenSSL's buffers back.
                break
            case .blockedOnWrite:
                return false
            case .eof:
                source.readClosed = true
            case let .failed(reset, text):
                readFailed(direction, reset: reset, text)
                return false
            }
        }
        if source.readClosed && !sink.writeClosed && !sink.hasPending {
            if case .blocked = sink.flushRecords() { return false }
            sink.shutdownWrite()
        }
        return false
    }

    /// The client's bytes while its refused request's answer waits for earlier responses
    /// (`clientHeld`, `ExchangeRefusal.awaitsResponses`): read and dropped — not forwarded,
    /// recorded, read for rows, nor counted as activity against the idle timeout — so its close
    /// or failure still ends the relay as ever. Returns true when it stopped only for fairness.
    private func dropHeldClientBytes(toward up: Leg) -> Bool {
        var rounds = 0
        while !client.readClosed {
            guard client.readable || (client.tls?.hasPending ?? false) else { break }
            if rounds == 16 { return true }
            rounds += 1
            switch client.read(into: buffer) {
            case .bytes, .wouldBlock:
                continue
            case .blockedOnWrite:
                return false
            case .eof:
                client.readClosed = true
            case let .failed(reset, text):
                readFailed(.clientToServer, reset: reset, text)
                return false
            }
        }
        if client.readClosed && !up.writeClosed && !up.hasPending {
            if case .blocked = up.flushRecords() { return false }
            up.shutdownWrite()
        }
        return false
    }

    private func splicePump(from source: Leg, to sink: Leg, direction: Direction) -> Bool {
        switch sink.flushPipe() {
        case .drained: break
        case .blocked: return false
        case let .failed(reset, text): sendFailed(direction, reset: reset, text); return false
        }
        var rounds = 0
        while !source.readClosed && source.readable {
            if rounds == 16 { return true }
            rounds += 1
            switch sink.spliceIn(from: source, max: 256 * 1024) {
            case .moved(let n):
                loop.counters.splicedBytes.wrappingAdd(UInt64(n), ordering: .relaxed)
                lastActivity = loop.now
                if let command = machine.spliced(n, direction, atMicros: loop.wallNow) { perform(command) }
                if !progressArmed && machine.hasUnreportedProgress { armProgress() }
                count(n, direction)
                switch sink.flushPipe() {
                case .drained: break
                case .blocked: return false
                case let .failed(reset, text): sendFailed(direction, reset: reset, text); return false
                }
            case .wouldBlock:
                break
            case .eof:
                source.readClosed = true
            case let .failed(reset, text):
                readFailed(direction, reset: reset, text)
                return false
            }
        }
        if source.readClosed && !sink.writeClosed && !sink.hasUnsent {
            sink.shutdownWrite()
        }
        return false
    }

    @inline(__always)
    private func count(_ n: Int, _ direction: Direction) {
        if direction == .clientToServer {
            loop.counters.bytesFromClients.wrappingAdd(UInt64(n), ordering: .relaxed)
        } else {
            loop.counters.bytesFromServers.wrappingAdd(UInt64(n), ordering: .relaxed)
        }
    }

    /// The bytes held `direction` (`heldTowardServer`, `heldTowardClient`).
    private func held(_ direction: Direction) -> [UInt8] {
        direction == .clientToServer ? heldTowardServer : heldTowardClient
    }

    private func setHeld(_ direction: Direction, _ bytes: [UInt8]) {
        if direction == .clientToServer { heldTowardServer = bytes } else { heldTowardClient = bytes }
    }

    private func appendHeld(_ direction: Direction, _ bytes: UnsafeRawBufferPointer) {
        if direction == .clientToServer { heldTowardServer.append(contentsOf: bytes) } else { heldTowardClient.append(contentsOf: bytes) }
    }

    /// The head held `direction` goes on (written, its rest stashed on a short write), the
    /// holding emptied; nothing when none is held.
    private func passHeld(_ direction: Direction, to sink: Leg) {
        let bytes = held(direction)
        guard !bytes.isEmpty else { return }
        setHeld(direction, [])
        bytes.withUnsafeBytes { passOn($0, to: sink) }
    }

    /// What the relay held of a head goes on once the reader no longer holds it (reading
    /// stopped: a 101 or another protocol, from the other side's bytes); true when it did.
    private func releaseStaleHeld(_ direction: Direction, to sink: Leg) -> Bool {
        guard !held(direction).isEmpty, exchanges?.holdsHead(direction) != true else { return false }
        passHeld(direction, to: sink)
        return true
    }

    /// The part of a refused burst that goes on (`ExchangeRefusal.passing`): written, its rest
    /// stashed on a short write, so the machine's answer and close come after it. A failed write
    /// is the close's to find.
    private func passOn(_ bytes: UnsafeRawBufferPointer, to sink: Leg) {
        guard !bytes.isEmpty else { return }
        if sink.hasPending { return sink.stash(bytes) }
        if case .wrote(let w) = sink.write(bytes), w < bytes.count { sink.stash(UnsafeRawBufferPointer(rebasing: bytes[w...])) }
    }

    /// Writes `chunk` to `sink` in two sends, split at `split` (an HTTP/2 early answer's
    /// RST_STREAM, `ExchangeReader.takeResponseSplit`: found while request rows are read, the
    /// default): the first part's records are sent before the second is written. A short or
    /// failed write is the caller's, as for one write.
    private func writeApart(_ chunk: UnsafeRawBufferPointer, at split: Int, to sink: Leg) -> Leg.WriteResult {
        guard split > 0, split < chunk.count else { return sink.write(chunk) }
        let first = sink.write(UnsafeRawBufferPointer(rebasing: chunk[..<split]))
        guard case .wrote(let w) = first, w == split else { return first }
        if sink.tls != nil {
            switch sink.flushRecords() {
            case .drained: break
            case .blocked: return .wrote(split)
            case let .failed(reset, text): return .failed(reset: reset, text)
            }
        }
        switch sink.write(UnsafeRawBufferPointer(rebasing: chunk[split...])) {
        case .wrote(let more): return .wrote(split + more)
        case let .failed(reset, text): return .failed(reset: reset, text)
        }
    }

    /// A burst of `n` bytes at the front of the buffer: the machine's totals (and what it asks
    /// in return), the loop's counters, the exchange rows, the recording; what the rows' reader
    /// refused of it, if anything (not to be forwarded from `ExchangeRefusal.passing` on).
    @inline(__always)
    private func moved(_ n: Int, _ direction: Direction) -> ExchangeRefusal? {
        lastActivity = loop.now
        if !buffersMayBeHeld { noteTLSActivity() }
        let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
        let now = loop.wallNow
        if let command = machine.moved(chunk, direction, atMicros: now) { perform(command) }
        if !progressArmed && machine.hasUnreportedProgress { armProgress() }
        count(n, direction)
        // The exchange's times read the clock itself: the loop's is read once per turn, and a
        // fast local server's response often comes back within the turn that sent the request,
        // which made a request last 0 µs (found by the walkthrough). One vDSO call per burst.
        var refusal: ExchangeRefusal?
        if machine.relay.recordsContent, !exchangesStopped { refusal = readExchanges(chunk, direction, at: EngineClock.wallMicros()) }
        if machine.relay.recordsContent, let recorder = shared.recorder, recorder.isRecording {
            record(chunk, direction, offsetMicros: now - machine.facts.startMicros, to: recorder)
        }
        return refusal
    }

    /// Hands a relay chunk to the flow's own recorder, asked for at the first chunk, else to the
    /// session's by flow id; stops once the recorder wants nothing more of the flow.
    @inline(__always)
    private func record(_ chunk: UnsafeRawBufferPointer, _ direction: Direction, offsetMicros: Int64, to recorder: any ChunkRecorder) {
        if case .unasked = chunkRoute {
            chunkRoute = recorder.flowRecorder(flow: machine.facts.id).map(ChunkRoute.held) ?? .byID
        }
        let wanted: Bool
        switch chunkRoute {
        case .done, .unasked: return
        case .held(let flowRecorder):
            wanted = flowRecorder.record(direction: direction, offsetMicros: offsetMicros, bytes: chunk)
        case .byID:
            wanted = recorder.record(flow: machine.facts.id, direction: direction, offsetMicros: offsetMicros, bytes: chunk)
        }
        if !wanted { chunkRoute = .done }
    }
}

/// How a connection's relay chunks reach the chunk recorder.
enum ChunkRoute {
    /// No chunk recorded yet.
    case unasked
    /// To the flow's own recorder (`ChunkRecorder.flowRecorder(flow:)`): no lookup per chunk.
    case held(any FlowChunkRecorder)
    /// The recorder has no flow recorder to give: `record(flow:…)` for every chunk.
    case byID
    /// The recorder said it records nothing more of this flow (`record` returned false: content
    /// keeping past the flow's budget on both sides): its chunks are no longer handed to it.
    case done
}

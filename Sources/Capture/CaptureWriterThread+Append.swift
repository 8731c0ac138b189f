import Dispatch
import FlowStore
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// The capture writer's appends: a batch's secrets, the held packets let go and the batch's
/// blocks (those of waiting flows copied aside) in one write, then their rows.
extension CaptureWriterThread {
    // MARK: writing

    /// A part of one append, in file order: the batch's secrets, a run of the batch's blocks, or
    /// bytes copied into `scratch` (held packets let go).
    fileprivate enum Piece {
        case secrets(Int)
        case batch(Range<Int>)
        case copied(Range<Int>)
    }

    /// Writes the packets from `start` (after the batch's secrets when `withSecrets`, then the
    /// held packets of `released`, in that order) until the batch ends or the file reaches its
    /// size limit, with one writev(2): the batch's blocks as they are, except the packets of a
    /// flow waiting for its secret (`CaptureHoldPolicy`), which are copied aside. Rows are made
    /// in file order (`CapturePacketRows`).
    /// - Returns: the index of the first packet not written.
    func writeSome(_ batch: CaptureBatch, from start: Int, withSecrets: Bool, released: [UInt64], failed: inout Int) -> Int {
        guard var open = file, let database else { return batch.packets.count }
        let secretsLength = withSecrets ? batch.secrets.count : 0
        var tally = CapturePacketRows(rowsPerFlow: configuration.rowsPerFlow)
        var pieces: [Piece] = []
        var length = secretsLength
        var packets = 0
        scratch.removeAll(keepingCapacity: true)
        if secretsLength > 0 { pieces.append(.secrets(secretsLength)) }
        let known = { (flow: UInt64) in self.count(of: flow, in: database) }
        /// Puts `flow`'s held packets into the write (copied into `scratch`), in order.
        func letGo(_ flow: UInt64) {
            guard let held = held.take(flow) else { return }
            let base = scratch.count
            scratch.append(contentsOf: held.blocks)
            held.blocks.withUnsafeBytes { blocks in
                for packet in held.packets {
                    _ = tally.add(packet, bytes: UnsafeRawBufferPointer(rebasing: blocks[packet.bytes]), offset: open.bytes + Int64(length), known: known)
                    length += packet.block.count
                }
            }
            packets += held.packets.count
            pieces.append(.copied(base..<scratch.count))
        }
        released.forEach(letGo)
        var index = start
        let limit = configuration.rotation.maximumBytes ?? 0
        batch.withBlocks { raw in
            var run = 0..<0
            func closeRun() {
                if !run.isEmpty { pieces.append(.batch(run)) }
                run = 0..<0
            }
            while index < batch.packets.count {
                if limit > 0, open.packets + Int64(packets) > 0, open.bytes + Int64(length) >= limit { break }
                let packet = batch.packets[index]
                index += 1
                if hold.isWaiting(packet.flow) {
                    if hold.offer(flow: packet.flow, bytes: packet.block.count) == .hold {
                        closeRun()
                        held.hold(packet, block: UnsafeRawBufferPointer(rebasing: raw[packet.block]))
                        continue
                    }
                    closeRun()
                    letGo(packet.flow)
                }
                let bytes = UnsafeRawBufferPointer(rebasing: raw[packet.bytes])
                if let summary = tally.add(packet, bytes: bytes, offset: open.bytes + Int64(length), known: known),
                   packet.direction == .clientToServer, summary.payloadLength >= 43,
                   let random = TLSClientRandom.ofClientHello(in: bytes) {
                    // Its later packets wait for the client's secret (the ClientHello itself is written).
                    _ = hold.clientHello(flow: packet.flow, random: random, timeMicros: packet.timeMicros)
                }
                run = run.isEmpty ? packet.block : run.lowerBound..<packet.block.upperBound
                length += packet.block.count
                packets += 1
            }
            closeRun()
        }
        let counts = tally.finish()
        let heldNow = UInt64(held.packets)
        box.state.withLock { $0.packetsHeld = heldNow }
        guard length > 0 else { return index }
        let failure: Errno?
        if pieces.count == 1, case .batch(let run) = pieces[0], let store = batch.storeMemory, run.lowerBound == batch.firstBlockOffset,
           open.output.inPlaceOffset == run.lowerBound {
            // The usual bulk batch: `prepare` placed its first block where the file's end is
            // from a block boundary, so its blocks go to the disk from the store itself.
            failure = open.output.append(inPlace: store.base, leading: run.lowerBound, count: run.count)
        } else {
            failure = batch.secrets.withUnsafeBytes { secrets in
                batch.withBlocks { blocks in
                    scratch.withUnsafeBytes { copied in
                        open.output.append(pieces.map { piece in
                            switch piece {
                            case .secrets(let n): UnsafeRawBufferPointer(rebasing: secrets[0..<n])
                            case .batch(let run): UnsafeRawBufferPointer(rebasing: blocks[run])
                            case .copied(let range): UnsafeRawBufferPointer(rebasing: copied[range])
                            }
                        })
                    }
                }
            }
        }
        if let failure {
            // The appender cut the file back to its last whole block: it stays readable.
            countFailed(packets, &failed)
            note(failure: "cannot write \(configuration.folder.filePath(open.seq)): \(failure.phrase)")
            return index
        }
        open.bytes += Int64(length)
        open.packets += Int64(packets)
        if packets > 0, open.firstPacketMicros == nil { open.firstPacketMicros = EngineClock.wallMicros() }
        open.unsynced = true
        open.tail.appended(pending: open.output.pending, nowNanos: DispatchTime.now().uptimeNanoseconds)
        file = open
        for (flow, n) in counts { flowCounts[flow] = n }
        if flowCounts.count > 200_000 { flowCounts = counts }
        let dropped = backlog.append(.init(seq: open.seq, bytes: open.bytes, packets: open.packets, rows: tally, packetCount: packets))
        if dropped > 0 { countFailed(dropped, &failed) }
        box.state.withLock {
            $0.writeMode = open.output.mode
            $0.recordingPackets = open.packets
        }
        commitBacklog(database)
        return index
    }

    /// Commits the rows waiting (`CaptureRowBacklog`: this write's, after any a full disk held
    /// back). A failure leaves them waiting, for the next write or tick; the counts of the flows
    /// stay in `flowCounts` meanwhile, so no row number is given twice.
    func commitBacklog(_ database: SQLiteDatabase) {
        guard !backlog.isEmpty else { return }
        do {
            let committed = try backlog.commit(statements: packetStatements(on: database))
            box.state.withLock {
                $0.packetsWritten &+= UInt64(committed)
                $0.lastFailure = nil
            }
        } catch {
            note(failure: error)
        }
    }

    /// Writes the held packets of `flows` (their waits ended: `CaptureHoldPolicy.expire`,
    /// `releaseAll`) into the open file, in that order.
    func writeHeld(_ flows: [UInt64]) {
        guard !flows.isEmpty, file != nil else { return }
        var failed = 0
        _ = writeSome(CaptureBatch(), from: 0, withSecrets: false, released: flows, failed: &failed)
    }

    /// Writes every held packet now (a flush: everything queued is then in the file).
    func writeAllHeld() { writeHeld(hold.releaseAll()) }

    func countFailed(_ packets: Int, _ failed: inout Int) {
        failed += packets
        box.state.withLock { $0.packetsFailed &+= UInt64(packets) }
    }

    /// The packets counted for `flow` so far (cache, else the table, else 0).
    func count(of flow: UInt64, in database: SQLiteDatabase) -> Int64 {
        if let known = flowCounts[flow] { return known }
        if let waiting = backlog.latestCount(of: flow) { return waiting }
        let value = try? database.scalar("SELECT packets FROM packet_counts WHERE flow_id = ?", [.integer(Int64(bitPattern: flow))])
        if case .integer(let n)? = value { return n }
        return 0
    }
}

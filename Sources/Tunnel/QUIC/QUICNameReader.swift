import Wire

/// Reads the ClientHello out of one QUIC client's Initial packets, to name its flow (issue 18):
/// the datagrams are forwarded untouched; copies of their Initials are opened here with the
/// Initial keys (RFC 9001 §5.2), their CRYPTO frames put back together in any order
/// (`QUICCryptoStream`), and the ClientHello read with `Wire`. Nothing past the Initial is
/// decrypted. A value confined to the engine thread; bounded in packets, bytes and time.
///
/// Keys come from the Destination Connection ID of the first Initial. A later Initial with
/// another DCID is first tried with the same keys (the client switched to the server's
/// connection ID, RFC 9001 §5.2), then with keys of its own DCID and version: when that opens
/// it, the read starts over (after a Retry or a version change).
struct QUICNameReader {
    /// The bounds of one read.
    struct Limits: Sendable, Equatable {
        /// Initial packets looked at before giving up.
        var packets = 16
        /// Reads started over before giving up.
        var restarts = 3
        /// Bytes of the CRYPTO stream held.
        var cryptoBytes = 16_384
        /// How long a read may last from the first datagram, ns.
        var nanos: UInt64 = 3_000_000_000
    }

    /// Why a read ended without a ClientHello.
    enum Failure: Sendable, Equatable {
        /// The ClientHello was not whole within the time limit.
        case timedOut
        /// More Initial packets (or restarts) than the limits allow.
        case tooManyPackets
        /// A frame, the CRYPTO stream or the ClientHello broke its format (one sentence).
        case malformed(String)
    }

    /// Where the read stands after a datagram.
    enum Outcome: Sendable, Equatable {
        case reading
        case finished(ClientHello)
        case failed(Failure)
    }

    /// What one datagram did, for the engine's counters.
    struct Tally: Sendable, Equatable {
        var opened = 0
        var notOpened = 0
        var restarts = 0
    }

    let limits: Limits
    let deadline: UInt64
    private var keys: QUICInitialKeys?
    private var keyedBy: (version: QUICVersion, dcid: [UInt8])?
    private var stream: QUICCryptoStream
    private var largestPacketNumber: UInt64?
    private var packetsSeen = 0
    private var restarts = 0
    private(set) var outcome: Outcome = .reading

    init(now: UInt64, limits: Limits = Limits()) {
        self.limits = limits
        deadline = now &+ limits.nanos
        stream = QUICCryptoStream(maximumBytes: limits.cryptoBytes)
    }

    /// Reads one client datagram (every coalesced packet in it, RFC 9000 §12.2).
    mutating func read(_ datagram: UnsafeRawBufferPointer, now: UInt64) -> Tally {
        var tally = Tally()
        guard outcome == .reading else { return tally }
        guard now < deadline else {
            outcome = .failed(.timedOut)
            return tally
        }
        var offset = 0
        while offset < datagram.count, outcome == .reading {
            let rest = UnsafeRawBufferPointer(rebasing: datagram[offset...])
            let start: QUICPacketStart
            do { start = try QUICLongHeaderParser.parse(rest) } catch {
                // A damaged header: the datagram's other packets cannot be found either.
                tally.notOpened += 1
                return tally
            }
            switch start {
            case .unread: return tally
            case .otherLongHeader(_, let length): offset += max(length, 1)
            case .initial(let header):
                offset += header.packetLength
                packetsSeen += 1
                guard packetsSeen <= limits.packets else {
                    outcome = .failed(.tooManyPackets)
                    return tally
                }
                readInitial(UnsafeRawBufferPointer(rebasing: rest[0..<header.packetLength]), header, &tally)
            }
        }
        return tally
    }

    /// The time is up (housekeeping): a read still going ends as timed out.
    mutating func expire(now: UInt64) {
        if outcome == .reading, now >= deadline { outcome = .failed(.timedOut) }
    }

    private mutating func readInitial(_ packet: UnsafeRawBufferPointer, _ header: QUICInitialHeader, _ tally: inout Tally) {
        let sameKeys = keyedBy.map { $0.version == header.version && $0.dcid == header.destinationConnectionID } ?? false
        var opened: QUICOpenedPacket?
        if let keys, case .success(let plain) = QUICPacketProtection.open(packet, header: header, keys: keys, largestPacketNumber: largestPacketNumber) {
            opened = plain
        } else if !sameKeys, let fresh = QUICInitialKeys(version: header.version, destinationConnectionID: header.destinationConnectionID),
                  case .success(let plain) = QUICPacketProtection.open(packet, header: header, keys: fresh, largestPacketNumber: largestPacketNumber) {
            if keys != nil {
                restarts += 1
                tally.restarts += 1
                guard restarts <= limits.restarts else {
                    outcome = .failed(.tooManyPackets)
                    return
                }
                stream = QUICCryptoStream(maximumBytes: limits.cryptoBytes)
            }
            keys = fresh
            keyedBy = (header.version, header.destinationConnectionID)
            opened = plain
        }
        guard let opened else {
            tally.notOpened += 1
            return
        }
        tally.opened += 1
        largestPacketNumber = max(largestPacketNumber ?? 0, opened.packetNumber)
        let frames: [QUICCryptoFrame]
        do {
            frames = try opened.payload.withUnsafeBufferPointer { buffer throws(WireFormatError) in
                try QUICInitialFrames.cryptoFrames(in: UnsafeRawBufferPointer(buffer))
            }
        } catch {
            outcome = .failed(.malformed(error.reason))
            return
        }
        for frame in frames {
            switch stream.add(frame) {
            case .needMore: continue
            case .malformed(let reason): outcome = .failed(.malformed(reason))
            case .clientHello(let message):
                do { outcome = .finished(try ClientHello(message: message)) } catch { outcome = .failed(.malformed(error.reason)) }
            }
            return
        }
    }
}

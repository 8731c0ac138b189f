import Wire

/// A TLS connection's client random (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2: the 32 bytes after the
/// ClientHello's legacy_version), the key an NSS key log line names its connection by. The
/// capture writer reads it from a client's ClientHello in a captured packet; the capture reads
/// it from the key log lines handed to it (`CaptureWriter.appendSecrets`) and the batch carries
/// it beside their Decryption Secrets Blocks (`CaptureBatch.clientRandoms`), to match a
/// connection with its secrets (`CaptureHoldPolicy`). Reading only: nothing here parses more of TLS than where the random is.
public struct TLSClientRandom: Hashable, Sendable {
    /// The 32 bytes, big-endian in four words (cheap to hash and compare).
    public let words: (UInt64, UInt64, UInt64, UInt64)

    /// - Parameter bytes: exactly 32 bytes.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 << 8 | UInt64(bytes[at + $1]) } }
        words = (word(0), word(8), word(16), word(24))
    }

    /// - Parameter words: the 32 bytes, big-endian, in four words.
    public init(words: (UInt64, UInt64, UInt64, UInt64)) {
        self.words = words
    }

    public static func == (a: TLSClientRandom, b: TLSClientRandom) -> Bool { a.words == b.words }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    /// The labels of key log lines that carry the secret for the client's direction after its
    /// Finished: TLS 1.3's `CLIENT_TRAFFIC_SECRET_0` and TLS 1.2's `CLIENT_RANDOM` (the master
    /// secret). Wireshark derives the client's keys when it reads that Finished, so these are the
    /// lines that must be in the file before it (NSS key log format).
    public static let clientFinishedLabels: [String] = ["CLIENT_TRAFFIC_SECRET_0", "CLIENT_RANDOM"]

    /// The client random of the ClientHello that starts the TCP payload of `packet` (a raw IPv4 or
    /// IPv6 packet, LINKTYPE_RAW, what was captured of it): a TLS handshake record (content type
    /// 22, version 3.x) whose first message is a ClientHello (type 1), the random whole in the
    /// captured bytes. Nil for anything else (not TCP, a later fragment, no payload, cut short).
    public static func ofClientHello(in packet: UnsafeRawBufferPointer) -> TLSClientRandom? {
        guard case .success(let layout) = IPDatagramLayout.read(packet), layout.transportProtocol == IPProtocolNumber.tcp,
              layout.carriesTransportHeader, !layout.headersCut else { return nil }
        let tcp = layout.transportOffset
        guard tcp + 20 <= packet.count else { return nil }
        let payload = tcp + Int(packet[tcp + 12] >> 4) * 4
        // record header (5) + handshake header (4) + legacy_version (2) + random (32)
        guard payload + 43 <= min(packet.count, layout.end) else { return nil }
        guard packet[payload] == 22, packet[payload + 1] == 3, packet[payload + 5] == 1 else { return nil }
        return TLSClientRandom(UnsafeRawBufferPointer(rebasing: packet[payload + 11..<payload + 43]))
    }

    /// The client randoms of the lines of `keyLog` (NSS key log lines, "LABEL RANDOM SECRET\n",
    /// split by `KeyLogLine`) whose label is one of `clientFinishedLabels` and whose random is 64
    /// hex digits, in order; other lines are skipped.
    public static func clientFinishedSecrets(inKeyLog keyLog: UnsafeRawBufferPointer) -> [TLSClientRandom] {
        var found: [TLSClientRandom] = []
        KeyLogLine.forEach(in: keyLog) { line in
            guard clientFinishedLabels.contains(where: { line.hasLabel($0, in: keyLog) }),
                  let random = line.clientRandom(in: keyLog) else { return }
            found.append(random)
        }
        return found
    }
}

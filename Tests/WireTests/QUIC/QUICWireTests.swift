import Testing
@testable import Wire

/// RFC 9001 Appendix A.2: the client Initial's CRYPTO frame (offset 0, length 241), carrying a
/// ClientHello for example.com with ALPN "alpn".
let rfc9001CryptoFrame = hex("060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e86804fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578616d706c652e636f6dff01000100000a00080006001d0017001800100007000504616c706e000500050100000000003300260024001d00209370b2c9caa47fbabaf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b0003020304000d0010000e0403050306030203080408050806002d00020101001c00024001003900320408ffffffffffffffff05048000ffff07048000ffff0801100104800075300901100f088394c8f03e51570806048000ffff")
/// The ClientHello inside it: the frame minus its type, offset and 2-byte length.
let rfc9001ClientHello = Array(rfc9001CryptoFrame[4...])

@Suite("QUIC varints, long headers, Initial frames (RFC 9000)")
struct QUICWireTests {
    private func varint(_ bytes: [UInt8]) throws -> UInt64 {
        try bytes.withUnsafeBufferPointer { buffer throws(WireFormatError) in
            var cursor = ByteCursor(buffer)
            let value = try cursor.readQUICVarint("a varint")
            guard cursor.isAtEnd else { throw WireFormatError("left over") }
            return value
        }
    }

    @Test("varints decode as RFC 9000 Appendix A.1's examples, and encode back")
    func varints() throws {
        #expect(try varint(hex("c2197c5eff14e88c")) == 151_288_809_941_952_652)
        #expect(try varint(hex("9d7f3e7d")) == 494_878_333)
        #expect(try varint(hex("7bbd")) == 15_293)
        #expect(try varint(hex("25")) == 37)
        #expect(try varint(hex("4025")) == 37)
        #expect(QUICVarint.encode(151_288_809_941_952_652) == hex("c2197c5eff14e88c"))
        #expect(QUICVarint.encode(494_878_333) == hex("9d7f3e7d"))
        #expect(QUICVarint.encode(15_293) == hex("7bbd"))
        #expect(QUICVarint.encode(37) == hex("25"))
        #expect(QUICVarint.encode(QUICVarint.maximum + 1) == nil)
        #expect(throws: WireFormatError.self) { try varint(hex("7b")) }
    }

    @Test("the RFC 9001 A.2 client Initial's header: DCID, PN offset, length; a 1,200-byte datagram looks like an Initial")
    func initialHeader() throws {
        // The protected header (A.2) followed by filler up to the 1,200 bytes of the datagram.
        let datagram = hex("c000000001088394c8f03e5157080000449e7b9aec34") + [UInt8](repeating: 0xAA, count: 1200 - 22)
        let start = try datagram.withUnsafeBytes { try QUICLongHeaderParser.parse($0) }
        #expect(start == .initial(QUICInitialHeader(version: .v1, destinationConnectionID: hex("8394c8f03e515708"), sourceConnectionID: [],
                                                    tokenLength: 0, packetNumberOffset: 18, packetLength: 1200)))
        #expect(datagram.withUnsafeBytes { QUICLongHeaderParser.looksLikeClientInitial($0) })
        #expect(!Array(datagram[0..<1199]).withUnsafeBytes { QUICLongHeaderParser.looksLikeClientInitial($0) })
        // RFC 9369 A.2: v2's Initial type bits are 0b01.
        let v2 = hex("d76b3343cf088394c8f03e5157080000449ea0c95e82") + [UInt8](repeating: 0xAA, count: 1200 - 22)
        #expect(v2.withUnsafeBytes { QUICLongHeaderParser.looksLikeClientInitial($0) })
        guard case .initial(let header) = try v2.withUnsafeBytes({ try QUICLongHeaderParser.parse($0) }) else { Issue.record("not an Initial"); return }
        #expect(header.version == .v2 && header.packetLength == 1200)
        // A v2 Handshake packet (type 0b11) is sized by its Length and skipped.
        let handshake = hex("f06b3343cf000005") + [1, 2, 3, 4, 5, 9, 9]
        #expect(try handshake.withUnsafeBytes { try QUICLongHeaderParser.parse($0) } == .otherLongHeader(version: .v2, length: 13))
    }

    @Test("headers tv does not read, and broken ones, with the RFC section in the error")
    func otherHeaders() throws {
        #expect(try hex("4000").withUnsafeBytes { try QUICLongHeaderParser.parse($0) } == .unread)          // short header
        #expect(try hex("c0ff00001d0000").withUnsafeBytes { try QUICLongHeaderParser.parse($0) } == .unread) // unknown version
        let longDCID = hex("c00000000115") + [UInt8](repeating: 1, count: 21) + [0, 0, 0]
        #expect { try longDCID.withUnsafeBytes { try QUICLongHeaderParser.parse($0) } } throws: { ($0 as? WireFormatError)?.reason.contains("RFC 9000 §17.2") == true }
        let pastEnd = hex("c000000001000000" + "4100") + [0, 0]
        #expect { try pastEnd.withUnsafeBytes { try QUICLongHeaderParser.parse($0) } } throws: {
            ($0 as? WireFormatError)?.reason == "A QUIC v1 long header's Length is 256 bytes but only 2 remain in the datagram (RFC 9000 §17.2)."
        }
        let noFixedBit = hex("8000000001000000") + [0]
        #expect(throws: WireFormatError.self) { try noFixedBit.withUnsafeBytes { try QUICLongHeaderParser.parse($0) } }
    }

    @Test("frames: CRYPTO kept, PADDING, PING, ACK (with ECN) and CONNECTION_CLOSE walked over")
    func frames() throws {
        // PING; ACK (largest 5, delay 2, 1 range after the first: gap 1, length 0); ACK-ECN (no
        // ranges, ECT0 0, ECT1 1, CE 2); CRYPTO at 1 "abc"; CONNECTION_CLOSE with reason "ab";
        // the RFC's CRYPTO frame; PADDING.
        let payload = hex("01") + hex("02050201000100") + hex("0305020001000102")
            + hex("060103616263") + hex("1c0a00026162") + rfc9001CryptoFrame + [0, 0, 0]
        let frames = try payload.withUnsafeBytes { try QUICInitialFrames.cryptoFrames(in: $0) }
        #expect(frames == [QUICCryptoFrame(offset: 1, data: Array("abc".utf8)), QUICCryptoFrame(offset: 0, data: rfc9001ClientHello)])
    }

    @Test("a frame type Initial packets may not carry, and a CRYPTO frame past the packet, are refused")
    func badFrames() {
        #expect { try hex("08000000").withUnsafeBytes { try QUICInitialFrames.cryptoFrames(in: $0) } } throws: {
            ($0 as? WireFormatError)?.reason == "An Initial packet carries a frame of type 0x8, which RFC 9000 §12.4 does not allow there."
        }
        #expect { try hex("060005616263").withUnsafeBytes { try QUICInitialFrames.cryptoFrames(in: $0) } } throws: {
            ($0 as? WireFormatError)?.reason == "A CRYPTO frame declares 5 bytes but only 3 remain in the packet (RFC 9000 §19.6)."
        }
    }

    @Test("the CRYPTO stream: split, out of order, repeated pieces make the ClientHello; bounds hold")
    func cryptoStream() throws {
        let hello = rfc9001ClientHello
        var stream = QUICCryptoStream()
        // Pieces in a shuffled order, one repeated, one overlapping.
        let cuts = [(100, 180), (0, 3), (180, hello.count), (3, 60), (50, 100), (100, 180)]
        var last = QUICCryptoStream.Progress.needMore
        for (i, (a, b)) in cuts.enumerated() {
            last = stream.add(QUICCryptoFrame(offset: UInt64(a), data: Array(hello[a..<b])))
            if i < 4 { #expect(last == .needMore) }
        }
        #expect(last == .clientHello(hello))
        let parsed = try ClientHello(message: hello)
        #expect(parsed.serverName == "example.com" && parsed.alpnProtocols == ["alpn"] && !parsed.carriesEncryptedClientHello)

        var small = QUICCryptoStream(maximumBytes: 100)
        #expect(small.add(QUICCryptoFrame(offset: 0, data: Array(hello[0..<10]))) == .malformed("The ClientHello declares 241 bytes, more than the 100 tv reads (RFC 8446 §4)."))
        var far = QUICCryptoStream(maximumBytes: 100)
        #expect(far.add(QUICCryptoFrame(offset: 90, data: Array(hello[0..<20]))) == .malformed("The client's CRYPTO stream reaches offset 110, past the 100 bytes tv reads of it (RFC 9000 §19.6)."))
        var notHello = QUICCryptoStream()
        #expect(notHello.add(QUICCryptoFrame(offset: 0, data: [2, 0, 0, 1, 0])) == .malformed("The client's CRYPTO stream starts with handshake message type 2, not a ClientHello (1) (RFC 9001 §4.1.3)."))
    }
}

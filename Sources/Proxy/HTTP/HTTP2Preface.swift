/// The few HTTP/2 bytes tv says to a client that spoke HTTP/2 in clear and cannot be relayed
/// (`reverse:https://…` to a server without HTTP/2): the client's connection preface recognised
/// (RFC 9113 §3.4), and tv's answer, its own preface (a SETTINGS frame, §3.4) then a GOAWAY
/// (§6.8) with an error code (§7) and one sentence as debug data.
enum HTTP2Preface {
    /// The client connection preface, RFC 9113 §3.4.
    static let client = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// NO_ERROR … RFC 9113 §7: INTERNAL_ERROR (0x2) and HTTP_1_1_REQUIRED (0xd).
    static let internalError: UInt32 = 0x2
    static let http11Required: UInt32 = 0xd
    /// The most debug bytes a GOAWAY carries (the sentence is cut to it at a UTF-8 boundary).
    static let debugLimit = 1_024

    /// Whether `bytes`, the client's first, begin the client preface (as many of its bytes as
    /// arrived, at least the three of "PRI").
    static func begins(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let n = min(bytes.count, client.count)
        guard n >= 3 else { return false }
        for i in 0..<n where bytes[i] != client[i] { return false }
        return true
    }

    /// An empty SETTINGS frame, then a GOAWAY (last stream 0, `code`, `debug` as its debug data).
    static func settingsThenGoaway(code: UInt32, debug: String) -> [UInt8] {
        var text = Array(debug.utf8)
        if text.count > debugLimit {
            var cut = debugLimit
            while cut > 0 && text[cut] & 0xC0 == 0x80 { cut -= 1 }   // not inside a UTF-8 sequence
            text = Array(text[..<cut])
        }
        var out = frameHeader(length: 0, type: 0x4)
        out += frameHeader(length: 8 + text.count, type: 0x7)
        out += [0, 0, 0, 0]
        out += [UInt8(code >> 24), UInt8(code >> 16 & 0xff), UInt8(code >> 8 & 0xff), UInt8(code & 0xff)]
        return out + text
    }

    /// A frame header (RFC 9113 §4.1): 24-bit length, type, flags 0, stream 0.
    private static func frameHeader(length: Int, type: UInt8) -> [UInt8] {
        [UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, 0, 0, 0, 0, 0]
    }
}

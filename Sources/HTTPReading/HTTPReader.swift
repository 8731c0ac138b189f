import Recording
import Wire

/// Reads a flow's turns as HTTP: HTTP/2 when the client starts with the connection preface
/// (RFC 9113 §3.4), HTTP/1.x when it starts with a request line (RFC 9112 §3), otherwise not
/// HTTP, with the reason. Never traps on malformed input: what cannot be read is said.
public enum HTTPReader {
    /// The HTTP/2 client connection preface, `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n` (24 bytes).
    public static let http2Preface: [UInt8] = HTTP2FrameScanner.clientPreface

    /// Reads `turns` (a flow's recorded turns, by number): HTTP/2 header fields within
    /// `HeaderListLimits.standard` (`headerLimits` in tests).
    public static func read(_ turns: [RecordedTurn], headerLimits: HeaderListLimits = .standard) -> HTTPReadResult {
        let result = readMessages(turns, headerLimits: headerLimits)
        guard case var .conversation(conversation) = result else { return result }
        conversation.recordingStopped = HTTPConversation.RecordingStop.of(turns)
        return .conversation(conversation)
    }

    /// `read` without the sides' recording stops.
    static func readMessages(_ turns: [RecordedTurn], headerLimits: HeaderListLimits = .standard) -> HTTPReadResult {
        guard let first = turns.first else {
            return .notHTTP(reason: "Nothing was kept of this flow, so there is nothing to read as HTTP.")
        }
        if let deleted = DeletedStart(turns.map(\.turn)) { return read(turns, after: deleted) }
        guard let client = turns.first(where: { $0.turn.direction == .clientToServer }) else {
            if first.bytes.starts(with: Array("HTTP/1.".utf8)) { return .conversation(HTTP1Reader.read(turns)) }
            return .notHTTP(reason: "Only the server spoke, and not in HTTP/1, so this is not read as HTTP.")
        }
        let bytes = client.bytes
        // An HTTP/2 server may send its SETTINGS before the client's preface arrives (§3.4).
        if bytes.starts(with: http2Preface) || (bytes.count < http2Preface.count && bytes.count >= 3 && http2Preface.starts(with: bytes)) {
            return .conversation(HTTP2Reader.read(turns, headerLimits: headerLimits))
        }
        if first.turn.direction == .serverToClient && !first.bytes.starts(with: Array("HTTP/1.".utf8)) {
            return .notHTTP(reason: "The server spoke first (\(describe(first.bytes))), which HTTP/1 servers do not do; this is another protocol.")
        }
        if looksLikeRequestLine(bytes) {
            return .conversation(HTTP1Reader.read(turns))
        }
        return .notHTTP(reason: "The client's first turn starts with \(describe(bytes)), which is neither an HTTP/1 request line nor the HTTP/2 preface; this is another protocol.")
    }

    /// Turns that begin after their connection did (`DeletedStart`): HTTP/1 is read from the
    /// first client turn that starts with a request line — the turns before it hold the rest of
    /// what was said before the deletion, whose requests went with it (a response there was
    /// paired with the next request kept: a trial) — and HTTP/2 never is: without the start its
    /// header blocks cannot be decoded (RFC 7541 §2.3.2: each one changes the table the next is
    /// read with), nor its streams told apart from the ones before.
    static func read(_ turns: [RecordedTurn], after deleted: DeletedStart) -> HTTPReadResult {
        guard let start = turns.firstIndex(where: { $0.turn.direction == .clientToServer && looksLikeRequestLine($0.bytes) }) else {
            return .startDeleted(deleted, http2: turns.contains { !$0.turn.startDeleted && looksLikeHTTP2Frames($0.bytes) })
        }
        var conversation = HTTP1Reader.read(Array(turns[start...]))
        conversation.deletedStart = deleted
        conversation.notes.insert(deleted.readingStarts(at: turns[start].turn.number), at: 0)
        return .conversation(conversation)
    }

    /// Whether `bytes` start with HTTP/2 frames (RFC 9113 §4.1): up to four frame headers, each
    /// of a type §6 defines (0x0–0x9) with the stream id's reserved bit clear, the last one's
    /// payload ending with the bytes or going on past them (a frame may go on in a later turn).
    static func looksLikeHTTP2Frames(_ bytes: [UInt8]) -> Bool {
        var at = 0, frames = 0
        while frames < 4, at + 9 <= bytes.count {
            guard bytes[at + 3] <= 0x09, bytes[at + 5] & 0x80 == 0 else { return false }
            at += 9 + (Int(bytes[at]) << 16 | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]))
            frames += 1
        }
        return frames > 0 && (frames == 4 || at >= bytes.count)
    }

    /// `METHOD SP` (a token: RFC 9110 §9.1, §5.6.2, any case, as the live reader takes it) and,
    /// when the line is complete, ` HTTP/1.x` at its end; empty lines before it are skipped
    /// (RFC 9112 §2.2). A request the proxy forwarded and recorded with a leading CRLF or a
    /// lower-case method read "another protocol" here, its headers and bodies shown nowhere (a
    /// hostile-input trial).
    static func looksLikeRequestLine(_ bytes: [UInt8]) -> Bool {
        let start = bytes.prefix(64).firstIndex { $0 != 0x0D && $0 != 0x0A } ?? bytes.count
        let line = bytes[start...]
        guard let space = line.prefix(32).firstIndex(of: 0x20), space > start,
              line[..<space].allSatisfy(HTTPToken.isTokenByte) else { return false }
        guard let lf = line.firstIndex(of: 0x0A) else { return true }
        var end = lf
        if end > start && line[end - 1] == 0x0D { end -= 1 }
        let text = String(decoding: line[..<end], as: UTF8.self)
        return text.split(separator: " ").last?.hasPrefix("HTTP/1.") == true
    }

    /// The first bytes for a sentence: quoted text when printable, else hex.
    static func describe(_ bytes: [UInt8]) -> String {
        let head = bytes.prefix(16)
        if !head.isEmpty && head.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) {
            return "'" + String(decoding: head, as: UTF8.self) + (bytes.count > 16 ? "…'" : "'")
        }
        return "the bytes " + head.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: " ") + (bytes.count > 16 ? " …" : "")
    }
}

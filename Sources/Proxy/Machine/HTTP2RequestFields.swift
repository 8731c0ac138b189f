#if canImport(Glibc)
import Glibc
#endif

/// The request fields an HTTP/2 exchange row keeps, from one decoded header block (values of
/// other fields are never copied), and the first rule of RFC 9113 §8.2–§8.3 the block breaks
/// (`HTTP2MalformedRequest.Rule`), if any.
///
/// A repeated pseudo-header keeps its first value, as the reader of kept turns does
/// (`HTTP2Reader`: `headers.first(":path")`, and so `tv request`, `tv turns --http`, the HAR and
/// `--curl`): one request, one name in every view. The row took the last while the others took
/// the first (a hostile-input trial: `:path /dup-a` then `/dup-hidden-b` read `/dup-hidden-b` in
/// `tv requests` and `/dup-a` in `tv request` and the HAR; the trial's lax server used the first,
/// as a server that looks a name up by its first match does). The request is malformed either
/// way, and the flow says so (`HTTP2MalformedRequest`).
struct HTTP2RequestFields {
    var method: String?
    var scheme: String?
    var authority: String?
    var path: String?
    var host: String?
    var protocolName = false
    /// The first rule the block broke, as far as it was read.
    private(set) var broken: HTTP2MalformedRequest.Rule?

    /// The request pseudo-header fields seen so far (`Pseudo`'s bits).
    private var seen: UInt8 = 0
    /// A regular field came: pseudo-header fields after it break §8.3.
    private var regularSeen = false

    private enum Pseudo: UInt8 {
        case method = 1, scheme = 2, authority = 4, path = 8, protocolName = 16
    }

    /// Takes one field. Every field is looked at for the pseudo-header rules (a compare of its
    /// first byte and, for a pseudo-header, of its short name); a field within the block's room
    /// (`admitted`, `HeaderBlockAdmission`) is also checked byte by byte and kept if the row
    /// keeps it. Fields past the room are never shown, and scanning them would let HPACK's
    /// one-byte references to a 4,000-byte field cost 4,000 bytes each (the trial's bomb).
    mutating func take(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, admitted: Bool) {
        if name.first == UInt8(ascii: ":") {
            let pseudo: Pseudo?
            if named(name, ":method") { pseudo = .method }
            else if named(name, ":scheme") { pseudo = .scheme }
            else if named(name, ":authority") { pseudo = .authority }
            else if named(name, ":path") { pseudo = .path }
            else if named(name, ":protocol") { pseudo = .protocolName }
            else { pseudo = nil }
            guard let pseudo else {
                breaks(.undefinedPseudoHeader)
                return
            }
            let word = Self.word(pseudo)
            if regularSeen { breaks(.pseudoHeaderAfterRegular(word)) }
            if seen & pseudo.rawValue != 0 {
                breaks(.repeatedPseudoHeader(word))
                return
            }
            seen |= pseudo.rawValue
            guard admitted else { return }
            if pseudo != .path, !Self.validValue(value) { breaks(.invalidFieldValue) }
            switch pseudo {
            case .method: method = text(value)
            case .scheme: scheme = text(value)
            case .authority: authority = text(value)
            case .path: path = text(value)
            case .protocolName: protocolName = true
            }
            return
        }
        regularSeen = true
        guard admitted else { return }
        if !Self.validName(name) { breaks(.invalidFieldName) }
        if !Self.validValue(value) { breaks(.invalidFieldValue) }
        if let special = Self.connectionSpecific(name, value) { breaks(.connectionSpecificField(special)) }
        if named(name, "host"), host == nil { host = text(value) }
    }

    /// After the block's last field: the rules about the whole request (§8.3.1). Called once,
    /// for a request's first block (trailers are not requests).
    mutating func finish() {
        let connect = method == "CONNECT"
        if seen & Pseudo.method.rawValue == 0 { breaks(.missingPseudoHeader(":method")) }
        // CONNECT names only :authority (§8.5); extended CONNECT (RFC 8441 §4) :scheme and
        // :path too.
        if !connect || protocolName {
            if seen & Pseudo.scheme.rawValue == 0 { breaks(.missingPseudoHeader(":scheme")) }
            if seen & Pseudo.path.rawValue == 0 { breaks(.missingPseudoHeader(":path")) }
        }
        if let path, !connect || protocolName, !Self.validPath(path, method: method) { breaks(.invalidPath) }
        if let authority, let host, !Self.sameASCIIIgnoringCase(authority, host) { breaks(.hostDiffersFromAuthority) }
    }

    private mutating func breaks(_ rule: HTTP2MalformedRequest.Rule) {
        if broken == nil { broken = rule }
    }

    private static func word(_ pseudo: Pseudo) -> String {
        switch pseudo {
        case .method: return ":method"
        case .scheme: return ":scheme"
        case .authority: return ":authority"
        case .path: return ":path"
        case .protocolName: return ":protocol"
        }
    }

    /// §8.2.1: no byte in 0x00–0x20, A–Z, or 0x7f–0xff, and no colon (pseudo-headers aside).
    private static func validName(_ name: UnsafeRawBufferPointer) -> Bool {
        !name.isEmpty && !name.contains { $0 <= 0x20 || ($0 >= 0x41 && $0 <= 0x5a) || $0 == 0x3a || $0 >= 0x7f }
    }

    /// §8.2.1: no NUL, LF or CR, and no space or tab at either end.
    private static func validValue(_ value: UnsafeRawBufferPointer) -> Bool {
        if let first = value.first, first == 0x20 || first == 0x09 { return false }
        if let last = value.last, last == 0x20 || last == 0x09 { return false }
        return !value.contains { $0 == 0 || $0 == 0x0a || $0 == 0x0d }
    }

    /// §8.3.1: the target's absolute path and query (it starts with `/`), or `*` for OPTIONS;
    /// never empty, and no control byte or space (none is in a URI, RFC 3986 §2).
    private static func validPath(_ path: String, method: String?) -> Bool {
        if path == "*" { return method == "OPTIONS" }
        guard path.utf8.first == UInt8(ascii: "/") else { return false }
        return !path.utf8.contains { $0 <= 0x20 || $0 == 0x7f }
    }

    /// §8.2.2: the connection-specific fields HTTP/2 has no use for (RFC 9110 §7.6.1), and TE
    /// other than `trailers`.
    private static func connectionSpecific(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> String? {
        for special: StaticString in ["connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade"] where named(name, special) {
            return special.description
        }
        if named(name, "te"), !named(value, "trailers") { return "te" }
        return nil
    }

    private static func sameASCIIIgnoringCase(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7a)
        }
    }
}

/// The response fields an exchange row keeps.
struct HTTP2ResponseFields {
    var status: Int?
    var contentType: String?
    var contentEncoding: String?

    mutating func take(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        if named(name, ":status") {
            guard value.count == 3, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return }
            status = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        } else if named(name, "content-type") {
            contentType = text(value)
        } else if named(name, "content-encoding") {
            contentEncoding = text(value)
        }
    }
}

/// Whether a decoded field name equals `name` (HTTP/2 names are lowercase, RFC 9113 §8.2.1).
private func named(_ raw: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
    guard raw.count == name.utf8CodeUnitCount else { return false }
    guard let base = raw.baseAddress else { return raw.isEmpty }
    return memcmp(base, name.utf8Start, raw.count) == 0
}

private func text(_ raw: UnsafeRawBufferPointer) -> String { String(decoding: raw, as: UTF8.self) }

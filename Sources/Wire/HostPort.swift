/// A destination as a host and a TCP port: the `authority` of an HTTP request target
/// (RFC 9112 §3.2.2, §3.2.3; RFC 3986 §3.2) such as `a.test:443`, `127.0.0.1:80` or `[::1]:8443`.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    /// The host as sent: a DNS name, an IPv4 address in dotted form, or an IPv6 address *without*
    /// its brackets (`::1`). Case is preserved. A name may hold U-labels in UTF-8 (`bücher.test`);
    /// `IDNA.asciiHost` gives its A-label form, which is what is dialled.
    public var host: String
    /// The TCP port, 1...65535.
    public var port: UInt16

    /// Creates a value from a host (IPv6 without brackets) and a port.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Whether `host` is an IPv6 address (it contains a colon, which names never do).
    public var isIPv6: Bool { host.utf8.contains(UInt8(ascii: ":")) }

    /// `host:port`, with brackets around an IPv6 host (`[::1]:443`): the text for a Host header or
    /// a CONNECT line.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension HostPort {
    /// Reads `text` as `uri-host [ ":" port ]` (an HTTP `Host` header's value or a request's
    /// authority), `defaultPort` when it has none; the rules of the buffer form below.
    /// - Throws: `WireFormatError` naming what is wrong.
    /// `what` names the text in reasons.
    public static func parse(authority text: String, defaultPort: UInt16, what: String = "The request's authority") throws(WireFormatError) -> HostPort {
        var copy = text
        let result = copy.withUTF8 { bytes -> Result<HostPort, WireFormatError> in
            do throws(WireFormatError) { return .success(try parse(bytes, defaultPort: defaultPort, what: what)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads `uri-host [ ":" port ]` (RFC 3986 §3.2.2, §3.2.3). The host is a reg-name of letters,
    /// digits, `-`, `.`, `_`, `~` and UTF-8 beyond ASCII (an international name as raw UTF-8,
    /// RFC 3987's ireg-name, converted by the caller with `IDNA.asciiHost`), or a bracketed IPv6
    /// address (no zone identifier). Without a
    /// port, `defaultPort` is used; when it is nil the port is required. `what` names the text in
    /// reasons ("The CONNECT target").
    static func parse(_ text: UnsafeBufferPointer<UInt8>, defaultPort: UInt16?, what: String) throws(WireFormatError) -> HostPort {
        // Userinfo (`user:password@`, never valid here) is masked in what the errors quote, and
        // a query or fragment (content) left out (`HTTPRequestTarget.quoted`).
        let quoted = HTTPRequestTarget.quoted(String(decoding: text, as: UTF8.self))
        var hostEnd: Int
        var hostStart = 0
        var portStart: Int?
        if text.first == UInt8(ascii: "[") {
            guard let close = text.firstIndex(of: UInt8(ascii: "]")) else {
                throw WireFormatError("\(what) \"\(quoted)\" opens an IPv6 bracket but never closes it.")
            }
            hostStart = 1
            hostEnd = close
            guard IPv6Text.isValid(UnsafeBufferPointer(rebasing: text[1 ..< close])) else {
                throw WireFormatError("\(what) \"\(quoted)\" holds an invalid IPv6 address between its brackets.")
            }
            if close + 1 < text.count {
                guard text[close + 1] == UInt8(ascii: ":") else {
                    throw WireFormatError("\(what) \"\(quoted)\" has text after its IPv6 bracket that is not a port.")
                }
                portStart = close + 2
            }
        } else {
            hostEnd = text.count
            var colons = 0
            for (index, byte) in text.enumerated() where byte == UInt8(ascii: ":") {
                colons += 1
                hostEnd = index
                portStart = index + 1
            }
            guard colons <= 1 else {
                throw WireFormatError("\(what) \"\(quoted)\" has several colons; an IPv6 address must be written in brackets.")
            }
            guard hostEnd > 0 else {
                throw WireFormatError("\(what) \"\(quoted)\" has no host.")
            }
            guard hostEnd <= 255 else {
                throw WireFormatError("\(what) has a host of \(hostEnd) bytes, more than the 255 a DNS name can have.")
            }
            for byte in text[0 ..< hostEnd] where byte < 0x80 && !Self.isHostByte(byte) {
                throw WireFormatError("\(what) \"\(quoted)\" has a host with byte 0x\(String(byte, radix: 16)), which is not a letter, digit, '-', '.', '_' or '~'.")
            }
        }
        let host = String(decoding: UnsafeBufferPointer(rebasing: text[hostStart ..< hostEnd]), as: UTF8.self)
        guard let portStart, portStart < text.count else {
            guard let defaultPort else {
                throw WireFormatError("\(what) \"\(quoted)\" has no port, but one is required.")
            }
            return HostPort(host: host, port: defaultPort)
        }
        var port = 0
        for byte in text[portStart...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), port <= 65_535 else {
                throw WireFormatError("\(what) \"\(quoted)\" has a port that is not a number from 1 to 65535.")
            }
            port = port * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard port >= 1, port <= 65_535 else {
            throw WireFormatError("\(what) \"\(quoted)\" has a port that is not a number from 1 to 65535.")
        }
        return HostPort(host: host, port: UInt16(port))
    }

    /// reg-name bytes accepted in a host: ALPHA / DIGIT / "-" / "." / "_" / "~" (the unreserved
    /// set of RFC 3986 §2.3; percent-encoding and sub-delims are refused).
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"),
             UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}

/// The request line of an HTTP/1 request head tv could not read (a NUL or DEL in its target, a
/// NUL in a field value: RFC 9112 §3, RFC 9110 §5.5), salvaged so the refused request
/// (`ExchangeReader.Stop.refused`) still has a row: before, such requests went to the server
/// and were answered while `tv requests` had nothing of them (a trial: three hostile requests,
/// 200 each, no row). Pure.
///
/// Salvaged only from bytes that begin like an HTTP/1 request (`RelayState.beginsHTTP1Request`:
/// a method of capital letters and a space); anything else is another protocol, not a broken
/// request, and has no row.
struct MalformedRequestLine: Equatable {
    /// The method, as sent (capital letters).
    var method: String
    /// The request target, every byte outside visible ASCII (0x21…0x7E) written as `%XX`.
    var target: String
    /// The version the line ends with ("HTTP/1.1"), or "HTTP/1.1" when it names none it can.
    var version: String

    init(method: String, target: String, version: String) {
        self.method = method
        self.target = target
        self.version = version
    }

    /// Most bytes of the line looked at.
    static let maxLine = 8_192

    /// The request line at the start of `bytes` (up to its LF, or `maxLine` bytes); nil when
    /// they do not begin like an HTTP/1 request.
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard RelayState.beginsHTTP1Request(bytes) else { return nil }
        var line = Array(bytes.prefix(Self.maxLine).prefix { $0 != UInt8(ascii: "\n") })
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        let space = line.firstIndex(of: UInt8(ascii: " "))!
        method = String(decoding: line[..<space], as: UTF8.self)
        var targetBytes = line[(space + 1)...]
        version = "HTTP/1.1"
        if let last = targetBytes.lastIndex(of: UInt8(ascii: " ")) {
            let tail = targetBytes[(last + 1)...]
            if tail.count == 8, tail.starts(with: Array("HTTP/".utf8)) {
                version = String(decoding: tail, as: UTF8.self)
                targetBytes = targetBytes[..<last]
            }
        }
        let hex = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        escaped.reserveCapacity(targetBytes.count)
        for byte in targetBytes {
            if byte > 0x20 && byte < 0x7F {
                escaped.append(byte)
            } else {
                escaped += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        target = String(decoding: escaped, as: UTF8.self)
    }
}

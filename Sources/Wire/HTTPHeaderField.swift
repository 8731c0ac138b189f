/// One header field line of an HTTP/1 message (RFC 9112 §5): `field-name ":" OWS field-value OWS`.
public struct HTTPHeaderField: Sendable, Hashable {
    /// The field name as sent (a token; compare case-insensitively, RFC 9110 §5.1).
    public var name: String
    /// The field value with surrounding spaces and tabs removed. Bytes are read as ISO-8859-1, so
    /// every byte maps to one Unicode scalar and `latin1Bytes` gives back the exact bytes sent
    /// (RFC 9110 §5.5: non-ASCII octets are opaque data).
    public var value: String

    /// Creates a field from a name and a value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The value's original bytes (each scalar of `value` is one byte, 0...255).
    public var latin1Bytes: [UInt8] { value.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) } }

    /// Whether `name` equals `other` ignoring ASCII case, without allocating.
    public func hasName(_ other: String) -> Bool {
        HTTPToken.equalsIgnoringASCIICase(name, other)
    }
}

/// A QUIC version number (RFC 9000 §15) and what its long headers mean. Only the versions whose
/// Initial packets tv can read are known: QUIC version 1 (RFC 9000) and version 2 (RFC 9369).
public struct QUICVersion: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 32-bit Version field of a long header (RFC 9000 §17.2).
    public let rawValue: UInt32
    /// Any version number, known or not (`isKnown`).
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// QUIC version 1, RFC 9000 §15.
    public static let v1 = QUICVersion(rawValue: 0x0000_0001)
    /// QUIC version 2, RFC 9369 §3.1.
    public static let v2 = QUICVersion(rawValue: 0x6B33_43CF)

    /// Whether tv can read this version's Initial packets (v1 or v2).
    public var isKnown: Bool { self == .v1 || self == .v2 }

    /// The long-header packet type of an Initial: 0b00 in v1 (RFC 9000 §17.2), 0b01 in v2
    /// (RFC 9369 §3.2).
    public var initialType: UInt8 { self == .v2 ? 0b01 : 0b00 }
    /// The long-header packet type of a Retry: 0b11 in v1, 0b00 in v2 (RFC 9369 §3.2).
    public var retryType: UInt8 { self == .v2 ? 0b00 : 0b11 }

    /// `v1`, `v2`, or the number in hex (`0xff00001d`).
    public var description: String {
        switch self {
        case .v1: return "v1"
        case .v2: return "v2"
        default: return "0x" + String(rawValue, radix: 16)
        }
    }
}

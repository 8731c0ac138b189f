/// TLS alert descriptions (RFC 8446 §6, RFC 5246 §7.2).
public enum TLSAlert {
    // The description codes this project sends or weighs (RFC 8446 §6.2).
    public static let closeNotify: UInt8 = 0
    public static let handshakeFailure: UInt8 = 40
    public static let badCertificate: UInt8 = 42
    public static let unsupportedCertificate: UInt8 = 43
    public static let certificateRevoked: UInt8 = 44
    public static let certificateExpired: UInt8 = 45
    public static let certificateUnknown: UInt8 = 46
    public static let unknownCA: UInt8 = 48
    public static let accessDenied: UInt8 = 49
    public static let decodeError: UInt8 = 50
    public static let protocolVersion: UInt8 = 70
    public static let internalError: UInt8 = 80
    public static let unrecognizedName: UInt8 = 112
    /// A TLS 1.3 server that requires a client certificate got none (RFC 8446 §4.4.2.4).
    public static let certificateRequired: UInt8 = 116
    public static let noApplicationProtocol: UInt8 = 120

    /// The alerts that say "I do not accept your certificate".
    public static let certificateRefusals: Set<UInt8> = [42, 43, 46, 48]

    /// The alert's name as the RFCs write it ("handshake_failure"); "alert 7" for a code they do not name.
    public static func name(_ code: UInt8) -> String {
        switch code {
        case 0: return "close_notify"
        case 10: return "unexpected_message"
        case 20: return "bad_record_mac"
        case 22: return "record_overflow"
        case 40: return "handshake_failure"
        case 42: return "bad_certificate"
        case 43: return "unsupported_certificate"
        case 44: return "certificate_revoked"
        case 45: return "certificate_expired"
        case 46: return "certificate_unknown"
        case 47: return "illegal_parameter"
        case 48: return "unknown_ca"
        case 49: return "access_denied"
        case 50: return "decode_error"
        case 51: return "decrypt_error"
        case 70: return "protocol_version"
        case 71: return "insufficient_security"
        case 80: return "internal_error"
        case 86: return "inappropriate_fallback"
        case 90: return "user_canceled"
        case 109: return "missing_extension"
        case 110: return "unsupported_extension"
        case 112: return "unrecognized_name"
        case 113: return "bad_certificate_status_response"
        case 115: return "unknown_psk_identity"
        case 116: return "certificate_required"
        case 120: return "no_application_protocol"
        default: return "alert \(code)"
        }
    }

    /// A fatal alert record as sent before any key is agreed (plaintext, RFC 8446 §5.1, §6).
    public static func plaintextRecord(_ code: UInt8) -> [UInt8] {
        [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, code]
    }
}

/// HTTP/2 error codes (RFC 9113 §7) by name, as the RFC spells them (RST_STREAM and GOAWAY
/// carry them); a code the RFC does not define reads "error 0x…".
public enum HTTP2ErrorCode {
    /// The name of `code` ("PROTOCOL_ERROR"), or "error 0x…" (hex) for an undefined one.
    public static func name(_ code: UInt32) -> String {
        switch code {
        case 0x0: return "NO_ERROR"
        case 0x1: return "PROTOCOL_ERROR"
        case 0x2: return "INTERNAL_ERROR"
        case 0x3: return "FLOW_CONTROL_ERROR"
        case 0x4: return "SETTINGS_TIMEOUT"
        case 0x5: return "STREAM_CLOSED"
        case 0x6: return "FRAME_SIZE_ERROR"
        case 0x7: return "REFUSED_STREAM"
        case 0x8: return "CANCEL"
        case 0x9: return "COMPRESSION_ERROR"
        case 0xa: return "CONNECT_ERROR"
        case 0xb: return "ENHANCE_YOUR_CALM"
        case 0xc: return "INADEQUATE_SECURITY"
        case 0xd: return "HTTP_1_1_REQUIRED"
        default: return "error 0x" + String(code, radix: 16)
        }
    }
}

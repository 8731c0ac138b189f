/// HTTP/2 frame types (RFC 9113 §6; §11.2 registry).
enum HTTP2FrameType: UInt8 {
    case data = 0x0
    case headers = 0x1
    case priority = 0x2
    case rstStream = 0x3
    case settings = 0x4
    case pushPromise = 0x5
    case ping = 0x6
    case goaway = 0x7
    case windowUpdate = 0x8
    case continuation = 0x9

    /// The name as the RFC writes it.
    var name: String {
        switch self {
        case .data: return "DATA"
        case .headers: return "HEADERS"
        case .priority: return "PRIORITY"
        case .rstStream: return "RST_STREAM"
        case .settings: return "SETTINGS"
        case .pushPromise: return "PUSH_PROMISE"
        case .ping: return "PING"
        case .goaway: return "GOAWAY"
        case .windowUpdate: return "WINDOW_UPDATE"
        case .continuation: return "CONTINUATION"
        }
    }

    /// The name of a type byte, known or not (`0xa`).
    static func name(of type: UInt8) -> String {
        HTTP2FrameType(rawValue: type)?.name ?? "type 0x" + String(type, radix: 16)
    }
}

/// Flag bits (RFC 9113 §6).
enum HTTP2Flags {
    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let padded: UInt8 = 0x8
    static let priority: UInt8 = 0x20
}

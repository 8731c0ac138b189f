/// HTTP/2 setting identifiers (RFC 9113 §6.5.2; RFC 8441 §3; RFC 9218 §2.1) by name.
enum HTTP2SettingName {
    static func name(_ id: UInt16) -> String {
        switch id {
        case 0x1: return "header_table_size"
        case 0x2: return "enable_push"
        case 0x3: return "max_concurrent_streams"
        case 0x4: return "initial_window_size"
        case 0x5: return "max_frame_size"
        case 0x6: return "max_header_list_size"
        case 0x8: return "enable_connect_protocol"
        case 0x9: return "no_rfc7540_priorities"
        default: return "setting_0x" + String(id, radix: 16)
        }
    }
}

/// One HTTP/2 frame (RFC 9113 §4.1): a 9-byte header — length (24 bits), type, flags, a reserved
/// bit and the stream identifier (31 bits) — and `length` bytes of payload.
struct HTTP2Frame: Equatable {
    /// The frame header's size in bytes.
    static let headerSize = 9

    var type: UInt8
    var flags: UInt8
    var streamID: UInt32
    var payload: [UInt8]

    /// The type, when it is one RFC 9113 defines.
    var knownType: HTTP2FrameType? { HTTP2FrameType(rawValue: type) }

    func has(_ flag: UInt8) -> Bool { flags & flag != 0 }
}

import CNghttp2

/// An HPACK decoder (RFC 7541) for one direction of one connection: nghttp2's inflater, whose
/// dynamic table carries from one header block to the next — so blocks must be decoded in the
/// order they were sent, and after an error the inflater is unusable.
final class HPACKInflater {
    private var inflater: OpaquePointer?

    /// - Throws: `HPACKError` when nghttp2 cannot make one (out of memory).
    init() throws(HPACKError) {
        var made: OpaquePointer?
        let rc = nghttp2_hd_inflate_new(&made)
        guard rc == 0, let made else { throw HPACKError(reason: String(cString: nghttp2_strerror(rc))) }
        inflater = made
    }

    deinit { nghttp2_hd_inflate_del(inflater) }

    /// Sets the largest dynamic table the peer's encoder may use (its SETTINGS_HEADER_TABLE_SIZE
    /// as announced by this side's receiver, RFC 9113 §6.5.2).
    func setMaximumTableSize(_ size: Int) {
        _ = nghttp2_hd_inflate_change_table_size(inflater, size)
    }

    /// Decodes one complete header block (HEADERS or PUSH_PROMISE plus its CONTINUATIONs).
    /// - Throws: `HPACKError` with nghttp2's reason when the block is not valid HPACK.
    func decode(_ block: [UInt8]) throws(HPACKError) -> [HTTPHeader] {
        var headers: [HTTPHeader] = []
        let failure: Int = block.withUnsafeBufferPointer { input -> Int in
            var position = 0
            while true {
                var pair = nghttp2_nv()
                var flags: Int32 = 0
                let rest = input.count - position
                let consumed = nghttp2_hd_inflate_hd2(inflater, &pair, &flags, input.baseAddress.map { $0 + position }, rest, 1)
                if consumed < 0 { return consumed }
                position += consumed
                if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
                    let name = String(decoding: UnsafeBufferPointer(start: pair.name, count: pair.namelen), as: UTF8.self)
                    let value = String(decoding: UnsafeBufferPointer(start: pair.value, count: pair.valuelen), as: UTF8.self)
                    headers.append(HTTPHeader(name, value))
                }
                if flags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 {
                    nghttp2_hd_inflate_end_headers(inflater)
                    return 0
                }
                if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) == 0 && position >= input.count {
                    return 0
                }
            }
        }
        if failure < 0 { throw HPACKError(reason: String(cString: nghttp2_strerror(Int32(failure)))) }
        return headers
    }
}

/// A header block that HPACK could not decode.
struct HPACKError: Error, Equatable {
    /// nghttp2's words (e.g. "Header compression/decompression error").
    var reason: String
}

import CNghttp2

/// An HPACK decoder (RFC 7541) for one direction of one connection: nghttp2's inflater, whose
/// dynamic table carries from one header block to the next — so blocks must be decoded in the
/// order they were sent, and after an error the inflater is unusable. Used by the proxy's
/// exchange reader on the data path and by HTTPReading for recorded turns.
public final class HPACKInflater {
    private var inflater: OpaquePointer?

    /// - Throws: `HPACKError` when nghttp2 cannot make one (out of memory).
    public init() throws(HPACKError) {
        var made: OpaquePointer?
        let rc = nghttp2_hd_inflate_new(&made)
        guard rc == 0, let made else { throw HPACKError(reason: String(cString: nghttp2_strerror(rc))) }
        inflater = made
    }

    deinit { nghttp2_hd_inflate_del(inflater) }

    /// Sets the largest dynamic table the peer's encoder may use (its SETTINGS_HEADER_TABLE_SIZE
    /// as announced by this side's receiver, RFC 9113 §6.5.2).
    public func setMaximumTableSize(_ size: Int) {
        _ = nghttp2_hd_inflate_change_table_size(inflater, size)
    }

    /// Decodes one complete header block (HEADERS or PUSH_PROMISE plus its CONTINUATIONs),
    /// handing each field to `field` as (name, value) bytes valid during the call only: nothing
    /// is copied unless the caller copies it.
    /// - Throws: `HPACKError` with nghttp2's reason when the block is not valid HPACK.
    public func decode(_ block: UnsafeRawBufferPointer,
                       each field: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) throws(HPACKError) {
        let input = block.bindMemory(to: UInt8.self)
        var position = 0
        var failure = 0
        while true {
            var pair = nghttp2_nv()
            var flags: Int32 = 0
            let rest = input.count - position
            let consumed = nghttp2_hd_inflate_hd2(inflater, &pair, &flags, input.baseAddress.map { $0 + position }, rest, 1)
            if consumed < 0 { failure = consumed; break }
            position += consumed
            if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
                field(UnsafeRawBufferPointer(start: pair.name, count: pair.namelen),
                      UnsafeRawBufferPointer(start: pair.value, count: pair.valuelen))
            }
            if flags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 {
                nghttp2_hd_inflate_end_headers(inflater)
                break
            }
            if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) == 0 && position >= input.count { break }
        }
        if failure < 0 { throw HPACKError(reason: String(cString: nghttp2_strerror(Int32(failure)))) }
    }

    /// Decodes one complete header block into (name, value) strings, in order: UTF-8 where the
    /// bytes are UTF-8, else one ISO-8859-1 character a byte (RFC 9110 §5.5), so no byte is lost.
    /// - Throws: `HPACKError` with nghttp2's reason when the block is not valid HPACK.
    public func decode(_ block: [UInt8]) throws(HPACKError) -> [(name: String, value: String)] {
        try decode(block) { _, _ in true }
    }

    /// Decodes one complete header block, whole (the table must follow every field), and makes
    /// strings only of the fields `keeping` answers true for (it sees each field's bytes first,
    /// in order): a reader's limit on what it keeps (`HeaderBlockAdmission`) costs no copy of
    /// what it leaves out.
    /// - Throws: `HPACKError` with nghttp2's reason when the block is not valid HPACK.
    public func decode(_ block: [UInt8], keeping: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool)
        throws(HPACKError) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        let failure: HPACKError? = block.withUnsafeBytes { bytes in
            do throws(HPACKError) {
                try decode(bytes) { name, value in
                    if keeping(name, value) { fields.append((Self.text(name), Self.text(value))) }
                }
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        return fields
    }

    /// `bytes` as UTF-8 when they are, else one ISO-8859-1 scalar a byte.
    static func text(_ raw: UnsafeRawBufferPointer) -> String {
        let bytes = raw.bindMemory(to: UInt8.self)
        return String(validating: bytes, as: UTF8.self) ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

/// A header block that HPACK could not decode.
public struct HPACKError: Error, Equatable, Sendable {
    /// nghttp2's words (e.g. "Header compression/decompression error").
    public var reason: String

    /// An error with nghttp2's reason.
    public init(reason: String) { self.reason = reason }
}

import FlowTerms

/// The packed form of an exchange run (`exchange_runs.exchanges`, migration 22): the finished
/// exchanges of one flow written in one batch, one after another, their ids `first_id`,
/// `first_id + 1`, … in that order. Pure: records in, bytes out, and back.
///
/// Integers are unsigned LEB128 varints (7 bits a byte, low bits first, at most 10 bytes);
/// "signed" ones are zigzag-mapped first (0, -1, 1, -2 … as 0, 1, 2, 3 …). Each exchange is:
/// 1. `flags` (varint): bit 0 stream id, 1 scheme, 2 authority, 3 query removed, 4 status,
///    5 reason, 6 response body bytes, 7 response wire bytes, 8 content type, 9 content encoding,
///    10 response time, 11 end time (present), 12 upgrade, 13 connect, 14 request end time
///    (present; migration 27: runs written before have none);
/// 2. the sequence number, signed, less the previous exchange's (0 before the first);
/// 3. the stream id when present;
/// 4. texts: HTTP version, method, scheme?, authority?, path, reason?, content type?, content
///    encoding?, state (`ExchangeState`'s raw value), each as a varint `n` then, when `n > 0`,
///    `n - 1` bytes of UTF-8; `n = 0` repeats the last value of that field in the run;
/// 5. status?, request body bytes, request wire bytes, response body bytes?, response wire bytes?;
/// 6. request time (signed, µs, less the previous exchange's; 0 before the first), response
///    time?, end time? and request end time? (signed, less this exchange's request time).
///
/// No value is checked here beyond the structure: reading gives the stored values to
/// `ExchangeColumns.record(_:)`, which checks each as it checks a column.
enum ExchangeRunCoding {
    /// The widest a run may span between its earliest and latest request time (µs): 60 s. The
    /// writer starts another run past it, so a page reader can bound which runs can hold a time.
    static let span: Int64 = 60_000_000

    /// Builds one run's bytes, an exchange at a time.
    struct Encoder {
        private(set) var bytes: [UInt8] = []
        /// The last value of each text field (the order of the texts above).
        private var previous: [String?] = Array(repeating: nil, count: 9)
        private var previousSequence: Int64 = 0
        private var previousRequestTime: Int64 = 0

        init() { bytes.reserveCapacity(256) }

        /// Appends `exchange` (its `id` and `flowID` are the run's, not written here).
        mutating func append(_ e: ExchangeRecord) {
            var flags: UInt64 = 0
            if e.streamID != nil { flags |= 1 << 0 }
            if e.scheme != nil { flags |= 1 << 1 }
            if e.authority != nil { flags |= 1 << 2 }
            if e.queryRemoved { flags |= 1 << 3 }
            if e.status != nil { flags |= 1 << 4 }
            if e.reason != nil { flags |= 1 << 5 }
            if e.responseBodyBytes != nil { flags |= 1 << 6 }
            if e.responseWireBytes != nil { flags |= 1 << 7 }
            if e.contentType != nil { flags |= 1 << 8 }
            if e.contentEncoding != nil { flags |= 1 << 9 }
            if e.responseTime != nil { flags |= 1 << 10 }
            if e.endTime != nil { flags |= 1 << 11 }
            if e.upgrade { flags |= 1 << 12 }
            if e.connect { flags |= 1 << 13 }
            if e.requestEndTime != nil { flags |= 1 << 14 }
            varint(flags)
            let sequence = Int64(e.sequence)
            signed(sequence &- previousSequence)
            previousSequence = sequence
            if let stream = e.streamID { varint(UInt64(bitPattern: stream)) }
            text(e.httpVersion, field: 0)
            text(e.method, field: 1)
            if let scheme = e.scheme { text(scheme, field: 2) }
            if let authority = e.authority { text(authority, field: 3) }
            text(e.path, field: 4)
            if let reason = e.reason { text(reason, field: 5) }
            if let type = e.contentType { text(type, field: 6) }
            if let encoding = e.contentEncoding { text(encoding, field: 7) }
            text(e.state.rawValue, field: 8)
            if let status = e.status { varint(UInt64(bitPattern: Int64(status))) }
            varint(UInt64(bitPattern: e.requestBodyBytes))
            varint(UInt64(bitPattern: e.requestWireBytes))
            if let n = e.responseBodyBytes { varint(UInt64(bitPattern: n)) }
            if let n = e.responseWireBytes { varint(UInt64(bitPattern: n)) }
            signed(e.requestTime &- previousRequestTime)
            previousRequestTime = e.requestTime
            if let time = e.responseTime { signed(time &- e.requestTime) }
            if let time = e.endTime { signed(time &- e.requestTime) }
            if let time = e.requestEndTime { signed(time &- e.requestTime) }
        }

        private mutating func text(_ value: String, field: Int) {
            if previous[field] == value {
                bytes.append(0)
                return
            }
            previous[field] = value
            let utf8 = value.utf8
            varint(UInt64(utf8.count) + 1)
            bytes.append(contentsOf: utf8)
        }

        private mutating func signed(_ value: Int64) {
            varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        }

        private mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
    }

    /// Why a run's bytes cannot be read: they end inside an exchange, a varint runs past 10
    /// bytes, a text is not UTF-8 or repeats a field no earlier exchange had, or bytes are left
    /// after the last exchange.
    struct Malformed: Error, Equatable {
        /// Where reading stopped (a byte offset into the run).
        var offset: Int
    }

    /// The stored values of each of the `count` exchanges packed in `bytes`, in
    /// `ExchangeColumns.names` order, ids from `firstID`, all of flow `flowID`.
    /// - Throws: `Malformed` when the bytes are not a run of `count` exchanges.
    static func values(_ bytes: [UInt8], firstID: Int64, flowID: Int64, count: Int) throws(Malformed) -> [[SQLiteValue]] {
        var reader = Reader(bytes: bytes)
        var out: [[SQLiteValue]] = []
        out.reserveCapacity(max(0, min(count, bytes.count)))
        var previous: [String?] = Array(repeating: nil, count: 9)
        var sequence: Int64 = 0
        var requestTime: Int64 = 0
        func text(_ field: Int) throws(Malformed) -> String {
            let n = try reader.varint()
            if n == 0 {
                guard let value = previous[field] else { throw Malformed(offset: reader.offset) }
                return value
            }
            let value = try reader.utf8(count: n - 1)
            previous[field] = value
            return value
        }
        for index in 0..<max(count, 0) {
            let flags = try reader.varint()
            func has(_ bit: UInt64) -> Bool { flags & (1 << bit) != 0 }
            sequence &+= try reader.signed()
            let stream: SQLiteValue = has(0) ? .integer(Int64(bitPattern: try reader.varint())) : .null
            let version = try text(0)
            let method = try text(1)
            let scheme: SQLiteValue = has(1) ? .text(try text(2)) : .null
            let authority: SQLiteValue = has(2) ? .text(try text(3)) : .null
            let path = try text(4)
            let reason: SQLiteValue = has(5) ? .text(try text(5)) : .null
            let type: SQLiteValue = has(8) ? .text(try text(6)) : .null
            let encoding: SQLiteValue = has(9) ? .text(try text(7)) : .null
            let state = try text(8)
            let status: SQLiteValue = has(4) ? .integer(Int64(bitPattern: try reader.varint())) : .null
            let requestBody = Int64(bitPattern: try reader.varint())
            let requestWire = Int64(bitPattern: try reader.varint())
            let responseBody: SQLiteValue = has(6) ? .integer(Int64(bitPattern: try reader.varint())) : .null
            let responseWire: SQLiteValue = has(7) ? .integer(Int64(bitPattern: try reader.varint())) : .null
            requestTime &+= try reader.signed()
            let responseTime: SQLiteValue = has(10) ? .integer(requestTime &+ (try reader.signed())) : .null
            let endTime: SQLiteValue = has(11) ? .integer(requestTime &+ (try reader.signed())) : .null
            let requestEndTime: SQLiteValue = has(14) ? .integer(requestTime &+ (try reader.signed())) : .null
            out.append([
                .integer(firstID &+ Int64(index)), .integer(flowID), .integer(sequence), stream, .text(version), .text(method),
                scheme, authority, .text(path), .integer(has(3) ? 1 : 0), status, reason, .integer(requestBody),
                .integer(requestWire), responseBody, responseWire, type, encoding, .integer(requestTime), responseTime,
                endTime, .integer(has(12) ? 1 : 0), .integer(has(13) ? 1 : 0), .text(state), requestEndTime,
            ])
        }
        guard reader.offset == bytes.count else { throw Malformed(offset: reader.offset) }
        return out
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func varint() throws(Malformed) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard offset < bytes.count, shift < 70 else { throw Malformed(offset: offset) }
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        mutating func signed() throws(Malformed) -> Int64 {
            let raw = try varint()
            return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
        }

        mutating func utf8(count: UInt64) throws(Malformed) -> String {
            guard count <= UInt64(bytes.count - offset) else { throw Malformed(offset: offset) }
            let end = offset + Int(count)
            guard let text = String(validating: bytes[offset..<end], as: UTF8.self) else { throw Malformed(offset: offset) }
            offset = end
            return text
        }
    }
}

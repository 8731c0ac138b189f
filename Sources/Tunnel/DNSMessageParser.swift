import Wire

/// Reads a DNS message from a UDP payload (RFC 1035 §4.1, name compression §4.1.4).
///
/// Strict where a lie would matter: counts past the end, names past 255 bytes or with labels past
/// 63, compression pointers that point forward or loop, RDLENGTH that disagrees with A/AAAA sizes
/// are errors. Records after the answer section (authority, additional) are not read.
public enum DNSMessageParser {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// At most this many questions and answers are read (a query has one; answers are few).
    public static let maximumRecords = 256

    public static func parse(_ bytes: [UInt8]) -> Result<DNSMessage, Failure> {
        bytes.withUnsafeBytes { parse($0) }
    }

    public static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<DNSMessage, Failure> {
        do { return .success(try read(bytes)) } catch let failure as Failure { return .failure(failure) } catch {
            return .failure(Failure(reason: "\(error)"))
        }
    }

    private static func read(_ b: UnsafeRawBufferPointer) throws -> DNSMessage {
        guard b.count >= 12 else { throw Failure(reason: "shorter than the 12-byte header") }
        func u16(_ i: Int) -> UInt16 { UInt16(b[i]) << 8 | UInt16(b[i + 1]) }
        let flags = u16(2)
        var message = DNSMessage(id: u16(0), isResponse: flags & 0x8000 != 0, opcode: UInt8((flags >> 11) & 0x0f),
                                 responseCode: UInt8(flags & 0x000f))
        let questionCount = Int(u16(4)), answerCount = Int(u16(6))
        guard questionCount <= maximumRecords, answerCount <= maximumRecords else { throw Failure(reason: "too many records") }
        var offset = 12
        for _ in 0..<questionCount {
            let name = try readName(b, &offset)
            guard offset + 4 <= b.count else { throw Failure(reason: "a question runs past the end") }
            message.questions.append(DNSQuestion(name: name, type: u16(offset), recordClass: u16(offset + 2)))
            offset += 4
        }
        for _ in 0..<answerCount {
            let name = try readName(b, &offset)
            guard offset + 10 <= b.count else { throw Failure(reason: "a record header runs past the end") }
            let type = u16(offset), recordClass = u16(offset + 2)
            let ttl = UInt32(u16(offset + 4)) << 16 | UInt32(u16(offset + 6))
            let length = Int(u16(offset + 8))
            offset += 10
            guard offset + length <= b.count else { throw Failure(reason: "RDATA runs past the end") }
            let data: DNSRecordData
            switch type {
            case DNSRecord.a where recordClass == 1, DNSRecord.aaaa where recordClass == 1:
                let expected = type == DNSRecord.a ? 4 : 16
                guard length == expected else { throw Failure(reason: "an address record has RDLENGTH \(length), not \(expected)") }
                data = .address(PacketAddress(reading: b.baseAddress! + offset, isIPv6: expected == 16))
            case DNSRecord.cname, DNSRecord.ptr:
                var inner = offset
                data = .name(try readName(b, &inner))
                guard inner <= offset + length else { throw Failure(reason: "a \(type == DNSRecord.ptr ? "PTR" : "CNAME") runs past its RDATA") }
            default:
                data = .other(length: length)
            }
            offset += length
            // RFC 2181 §8: a TTL with the top bit set is treated as zero.
            message.answers.append(DNSRecord(name: name, type: type, recordClass: recordClass,
                                             ttl: ttl & 0x8000_0000 != 0 ? 0 : ttl, data: data))
        }
        return message
    }

    /// Reads a possibly compressed name at `offset`, advancing it past the name's bytes in place
    /// (Wire's `DNSName`, the one reader of names).
    static func readName(_ b: UnsafeRawBufferPointer, _ offset: inout Int) throws -> String {
        do { return try DNSName.read(b, &offset) } catch { throw Failure(reason: error.reason) }
    }

    /// A SERVFAIL answer to `query` (its header and question echoed, RA set, no records), for
    /// when no resolver can be asked. Nil when the query is shorter than a header.
    public static func serverFailure(answering query: UnsafeRawBufferPointer) -> [UInt8]? {
        guard query.count >= 12 else { return nil }
        var offset = 12
        let questions = Int(UInt16(query[4]) << 8 | UInt16(query[5]))
        if questions == 1, (try? readName(query, &offset)) != nil, offset + 4 <= query.count {
            offset += 4
        } else {
            offset = 12
        }
        var out = Array(query[0..<offset])
        out[2] = 0x80 | (query[2] & 0x79)   // QR, the query's opcode and RD
        out[3] = 0x80 | 0x02               // RA, RCODE 2
        out[4] = 0; out[5] = offset > 12 ? 1 : 0
        for i in 6..<12 { out[i] = 0 }
        return out
    }
}

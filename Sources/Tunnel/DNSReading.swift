/// What a port-53 datagram says as DNS (RFC 1035 §4.1), for `tv packet`'s DNS fields: the kind
/// of message, the name looked up and its record type, and on a reply what it answered, or why
/// the message cannot be read. A capture that kept too little (the snaplen cut the datagram,
/// Settings can change it) and bytes that are not a DNS message (nothing can) are two readings.
public enum DNSReading: Sendable, Equatable {
    case message(DNSFields)
    /// The captured bytes end before the UDP payload does.
    case captureKeptTooLittle
    /// The payload is whole but is not a DNS message: the parser's reason (`DNSMessageParser`).
    case notDNS(reason: String)
    /// A TCP segment to or from port 53 that holds only part of a message (RFC 7766 §8: a
    /// message over TCP is its 2-byte length, then the message, in as many segments as it takes).
    case partOfTCPMessage

    /// Reads a TCP segment's whole payload to or from port 53: the first message in it when the
    /// segment holds its length and all of it (RFC 1035 §4.2.2), else `partOfTCPMessage`.
    public static func read(tcpPayload payload: [UInt8]) -> DNSReading {
        guard payload.count >= 2 else { return .partOfTCPMessage }
        let length = Int(payload[0]) << 8 | Int(payload[1])
        guard length > 0, payload.count >= 2 + length else { return .partOfTCPMessage }
        return read(Array(payload[2..<(2 + length)]))
    }

    /// Reads a whole UDP payload.
    public static func read(_ payload: [UInt8]) -> DNSReading {
        switch DNSMessageParser.parse(payload) {
        case .success(let message): return .message(DNSFields(message))
        case .failure(let failure): return .notDNS(reason: failure.reason)
        }
    }
}

/// The DNS fields of one message.
public struct DNSFields: Sendable, Equatable {
    public var id: UInt16
    /// QR: a reply rather than a query.
    public var isReply: Bool
    /// The first question's name (lowercased, no trailing dot); nil when there is no question.
    public var name: String?
    /// The first question's QTYPE.
    public var recordType: UInt16?
    /// On a reply, what it answered; nil on a query.
    public var answer: DNSAnswer?

    public init(id: UInt16, isReply: Bool, name: String?, recordType: UInt16?, answer: DNSAnswer?) {
        self.id = id
        self.isReply = isReply
        self.name = name
        self.recordType = recordType
        self.answer = answer
    }

    public init(_ message: DNSMessage) {
        let question = message.questions.first
        self.init(id: message.id, isReply: message.isResponse, name: question?.name, recordType: question?.type,
                  answer: message.isResponse ? DNSAnswer(message) : nil)
    }
}

/// What a reply answered (RFC 1035 §4.1.1 RCODE; NODATA and NXDOMAIN as RFC 2308 §1–2 name them).
public struct DNSAnswer: Sendable, Equatable {
    public var outcome: Outcome
    /// The A and AAAA addresses in the answer section, in order.
    public var addresses: [PacketAddress]
    /// The names the answer section resolved to (CNAME targets, PTR names), in order.
    public var names: [String]
    /// Records of the types not broken down, counted by type, in order of first appearance.
    public var otherRecords: [RecordCount]

    /// How many records of one type.
    public struct RecordCount: Sendable, Equatable {
        public var type: UInt16
        public var count: Int
        public init(type: UInt16, count: Int) {
            self.type = type
            self.count = count
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// RCODE 0 with at least one record of the type asked for (any type for ANY).
        case answered
        /// RCODE 3, Name Error (NXDOMAIN): the name does not exist.
        case noSuchName
        /// RCODE 0 and no record of the type asked for (NODATA): the name exists, that type does
        /// not (a CNAME alone leads to a name without it).
        case noRecordsOfThatType
        /// Any other RCODE (2 server failure, 5 refused, …).
        case failed(responseCode: UInt8)
    }

    public init(outcome: Outcome, addresses: [PacketAddress] = [], names: [String] = [], otherRecords: [RecordCount] = []) {
        self.outcome = outcome
        self.addresses = addresses
        self.names = names
        self.otherRecords = otherRecords
    }

    init(_ message: DNSMessage) {
        var addresses: [PacketAddress] = []
        var names: [String] = []
        var others: [RecordCount] = []
        for record in message.answers {
            switch record.data {
            case .address(let address): addresses.append(address)
            case .name(let name): names.append(name)
            case .other:
                if let i = others.firstIndex(where: { $0.type == record.type }) { others[i].count += 1 } else {
                    others.append(RecordCount(type: record.type, count: 1))
                }
            }
        }
        let asked = message.questions.first?.type
        let outcome: Outcome
        switch message.responseCode {
        case 0:
            let any: UInt16 = 255
            let hasAsked = message.answers.contains { asked == nil || asked == any || $0.type == asked }
            outcome = hasAsked ? .answered : .noRecordsOfThatType
        case 3: outcome = .noSuchName
        default: outcome = .failed(responseCode: message.responseCode)
        }
        self.init(outcome: outcome, addresses: addresses, names: names, otherRecords: others)
    }
}

/// The mnemonics of DNS record types (IANA "Resource Record (RR) TYPEs"), and RFC 3597 §5's
/// `TYPE123` for the rest.
public enum DNSRecordTypeNames {
    public static func name(_ type: UInt16) -> String {
        names[type] ?? "TYPE\(type)"
    }

    static let names: [UInt16: String] = [
        1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA", 33: "SRV", 35: "NAPTR",
        39: "DNAME", 41: "OPT", 43: "DS", 46: "RRSIG", 47: "NSEC", 48: "DNSKEY", 52: "TLSA", 64: "SVCB", 65: "HTTPS",
        255: "ANY", 257: "CAA",
    ]
}

/// The header of a DNS message and its first question (RFC 1035 §4.1.1, §4.1.2): what pairs a
/// response with its query (RFC 5452 §9.1: the ID and the question) and names a query, without
/// reading the records (the tunnel's `DNSMessageParser` reads those).
public struct DNSMessageHead: Sendable, Equatable {
    public var id: UInt16
    /// QR: a response rather than a query.
    public var isResponse: Bool
    /// OPCODE (0 = standard query).
    public var opcode: UInt8
    /// RCODE (0 no error, 2 server failure, 3 name error …).
    public var responseCode: UInt8
    /// QDCOUNT.
    public var questionCount: Int
    /// The first question; nil when there is none.
    public var question: DNSQuestionEntry?

    public init(id: UInt16, isResponse: Bool, opcode: UInt8 = 0, responseCode: UInt8 = 0, questionCount: Int, question: DNSQuestionEntry?) {
        self.id = id
        self.isResponse = isResponse
        self.opcode = opcode
        self.responseCode = responseCode
        self.questionCount = questionCount
        self.question = question
    }

    /// Reads a whole message's head; nil when it is shorter than the 12-byte header or its first
    /// question cannot be read (`DNSName`), which no resolver would take as DNS either.
    public static func read(_ message: UnsafeRawBufferPointer) -> DNSMessageHead? {
        guard message.count >= 12 else { return nil }
        func u16(_ i: Int) -> UInt16 { UInt16(message[i]) << 8 | UInt16(message[i + 1]) }
        let flags = u16(2)
        var head = DNSMessageHead(id: u16(0), isResponse: flags & 0x8000 != 0, opcode: UInt8((flags >> 11) & 0x0f),
                                  responseCode: UInt8(flags & 0x000f), questionCount: Int(u16(4)), question: nil)
        guard head.questionCount > 0 else { return head }
        var offset = 12
        guard let name = try? DNSName.read(message, &offset), offset + 4 <= message.count else { return nil }
        head.question = DNSQuestionEntry(name: name, type: u16(offset), recordClass: u16(offset + 2))
        return head
    }
}

/// One entry of a question section (RFC 1035 §4.1.2).
public struct DNSQuestionEntry: Sendable, Hashable {
    /// Lowercased, without the trailing dot (`example.com`; the root is "").
    public var name: String
    /// QTYPE (1 A, 28 AAAA, …).
    public var type: UInt16
    /// QCLASS (1 IN).
    public var recordClass: UInt16

    public init(name: String, type: UInt16, recordClass: UInt16 = 1) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
    }
}

/// A DNS message as the tunnel reads it (RFC 1035 §4.1): the header, the questions and the
/// answer records (A, AAAA, CNAME and PTR read; others kept by type and TTL only).
public struct DNSMessage: Sendable, Equatable {
    public var id: UInt16
    /// QR: a response rather than a query.
    public var isResponse: Bool
    /// OPCODE (0 = standard query).
    public var opcode: UInt8
    /// RCODE (0 no error, 2 server failure, 3 name error …).
    public var responseCode: UInt8
    public var questions: [DNSQuestion]
    public var answers: [DNSRecord]

    public init(id: UInt16, isResponse: Bool, opcode: UInt8 = 0, responseCode: UInt8 = 0,
                questions: [DNSQuestion] = [], answers: [DNSRecord] = []) {
        self.id = id
        self.isResponse = isResponse
        self.opcode = opcode
        self.responseCode = responseCode
        self.questions = questions
        self.answers = answers
    }

    /// The name → address pairs that answer `question`: those of `resolvedAddresses` whose name
    /// the question's CNAME chain reaches (the question's name, then each alias's target). A
    /// record outside the chain is one a stub resolver does not use either (glibc's
    /// `getanswer_r` follows the chain from the question): a resolver's answer to `evil.test`
    /// carrying `www.bank.example A 192.0.2.1` names nothing. nil question: none.
    public func resolvedAddresses(answering question: DNSQuestion?) -> [DNSResolvedAddress] {
        guard let question else { return [] }
        var reachable: Set<String> = [question.name]
        var frontier = [question.name]
        while let name = frontier.popLast() {
            for record in answers where record.type == DNSRecord.cname && record.name == name {
                if case .name(let target) = record.data, reachable.insert(target).inserted { frontier.append(target) }
            }
        }
        return resolvedAddresses.filter { reachable.contains($0.name) }
    }

    /// Every name → address the answers give, the CNAME chain followed back to the names that led
    /// to it (the question's name included), with the smallest TTL along the way (seconds).
    public var resolvedAddresses: [DNSResolvedAddress] {
        var aliasesOf: [String: [(String, UInt32)]] = [:]  // target → (alias, ttl)
        for record in answers {
            if case .name(let target) = record.data, record.type == DNSRecord.cname {
                aliasesOf[target, default: []].append((record.name, record.ttl))
            }
        }
        var out: [DNSResolvedAddress] = []
        var seen = Set<DNSResolvedAddress>()
        for record in answers {
            guard case .address(let address) = record.data else { continue }
            var frontier: [(String, UInt32)] = [(record.name, record.ttl)]
            var visited = Set<String>()
            while let (name, ttl) = frontier.popLast() {
                guard visited.insert(name).inserted else { continue }
                let item = DNSResolvedAddress(name: name, address: address, ttl: ttl)
                if seen.insert(item).inserted { out.append(item) }
                for (alias, aliasTTL) in aliasesOf[name] ?? [] { frontier.append((alias, min(ttl, aliasTTL))) }
            }
        }
        return out
    }
}

/// One entry of the question section.
public struct DNSQuestion: Sendable, Equatable {
    /// Lowercased, without the trailing dot (`example.com`; the root is "").
    public var name: String
    public var type: UInt16
    public var recordClass: UInt16

    public init(name: String, type: UInt16, recordClass: UInt16 = 1) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
    }
}

/// One resource record (RFC 1035 §4.1.3).
public struct DNSRecord: Sendable, Equatable {
    public static let a: UInt16 = 1
    public static let cname: UInt16 = 5
    public static let ptr: UInt16 = 12
    public static let aaaa: UInt16 = 28

    /// The owner name, lowercased, without the trailing dot.
    public var name: String
    public var type: UInt16
    public var recordClass: UInt16
    /// Seconds.
    public var ttl: UInt32
    public var data: DNSRecordData

    public init(name: String, type: UInt16, recordClass: UInt16 = 1, ttl: UInt32, data: DNSRecordData) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.ttl = ttl
        self.data = data
    }
}

/// The RDATA of a record, for the types the tunnel reads.
public enum DNSRecordData: Sendable, Equatable {
    /// A (4 bytes) or AAAA (16 bytes).
    case address(PacketAddress)
    /// CNAME's target, PTR's name (RFC 1035 §3.3.1, §3.3.12).
    case name(String)
    /// Anything else: its RDLENGTH.
    case other(length: Int)
}

/// A name an answer resolved, with the address and TTL (seconds).
public struct DNSResolvedAddress: Sendable, Hashable {
    public var name: String
    public var address: PacketAddress
    public var ttl: UInt32

    public init(name: String, address: PacketAddress, ttl: UInt32) {
        self.name = name
        self.address = address
        self.ttl = ttl
    }
}

extension DNSMessage {
    /// An RCODE's name for people (RFC 1035 §4.1.1; RFC 6895 §2.3): "refused (RCODE 5)"; the one
    /// wording `tv packet`'s DNS fields and a DNS flow's error share (they said it two ways: a trial).
    public static func responseCodeName(_ code: UInt8) -> String {
        switch code {
        case 1: return "format error (RCODE 1)"
        case 2: return "server failure (RCODE 2)"
        case 3: return "no such name (NXDOMAIN)"
        case 4: return "not implemented (RCODE 4)"
        case 5: return "refused (RCODE 5)"
        default: return "RCODE \(code)"
        }
    }
}

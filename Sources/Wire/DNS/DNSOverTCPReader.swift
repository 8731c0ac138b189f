/// DNS over TCP read as a connection carries it (RFC 7766): the program's queries and the server's
/// responses, each direction cut into messages (`DNSTCPFraming`), each response paired with the
/// query that has its ID (RFC 7766 §6.2.1.1: responses may come in any order, matched by ID).
/// Pure: the relay feeds it the bytes it moves, in order, and acts on what it finds.
///
/// Whether a response answers its query's question (the same question, its CNAME chain) is not
/// decided here: the response's bytes go on with the question asked, for the reader of records
/// (the tunnel's `DNSAnswerMatch`), as a UDP answer does.
///
/// Bounded: at most `maximumWaiting` queries wait for a response (one more is not tracked, and
/// counted); a message that is not DNS (shorter than its header, a question that cannot be
/// read, a response sent by the program or a query by the server) ends the reading of both
/// directions for good (a port-53 connection that speaks something else, as some tunnels do),
/// and what was left unread is counted.
public struct DNSOverTCPReader: Sendable {
    /// Queries that may wait for their responses at once (pipelining, RFC 7766 §6.2.1.1).
    public static let maximumWaiting = 64

    /// What a message was.
    public enum Finding: Sendable, Equatable {
        /// A query from the program: its ID and first question (nil: it asked none).
        case query(id: UInt16, question: DNSQuestionEntry?)
        /// A response to a query this connection carried (its ID's).
        case response(TCPDNSAnswer)
    }

    /// What the reader counted.
    public struct Counts: Sendable, Equatable {
        public var queries: UInt64 = 0
        /// Responses paired with a waiting query.
        public var responses: UInt64 = 0
        /// Responses whose ID no waiting query had (a late or unsolicited one): they name nothing.
        public var strayResponses: UInt64 = 0
        /// Queries not tracked because `maximumWaiting` waited already: their responses are strays.
        public var queriesNotTracked: UInt64 = 0
        /// Bytes not read: after a message that is not DNS, and of a message the stream's end cut.
        public var bytesNotRead: UInt64 = 0
        /// The stream stopped being read as DNS (a message that is not DNS).
        public var gaveUp = false
        public init() {}
    }

    private var fromClient = DNSTCPFraming()
    private var fromServer = DNSTCPFraming()
    /// Queries waiting for their response, by ID: the question each asked.
    private var waiting: [UInt16: DNSQuestionEntry] = [:]
    public private(set) var counts = Counts()

    public init() {}

    /// Whether the stream is still read (false once a message was not DNS).
    public var isReading: Bool { !counts.gaveUp }

    /// One burst the relay moved: from the program (`fromClient`) or from the server. `found` gets
    /// what each whole message was, in order.
    public mutating func read(_ chunk: UnsafeRawBufferPointer, fromClient client: Bool, _ found: (Finding) -> Void) {
        guard !counts.gaveUp else {
            counts.bytesNotRead &+= UInt64(chunk.count)
            return
        }
        func message(_ bytes: UnsafeRawBufferPointer) {
            guard !counts.gaveUp else {
                counts.bytesNotRead &+= UInt64(2 + bytes.count)
                return
            }
            guard let head = DNSMessageHead.read(bytes), head.isResponse != client else {
                counts.gaveUp = true
                counts.bytesNotRead &+= UInt64(2 + bytes.count)
                return
            }
            if client {
                counts.queries &+= 1
                if head.questionCount == 1, let question = head.question {
                    if waiting[head.id] == nil && waiting.count >= Self.maximumWaiting {
                        counts.queriesNotTracked &+= 1
                    } else {
                        waiting[head.id] = question
                    }
                }
                found(.query(id: head.id, question: head.question))
            } else if let asked = waiting.removeValue(forKey: head.id) {
                counts.responses &+= 1
                found(.response(TCPDNSAnswer(message: Array(bytes), asked: asked)))
            } else {
                counts.strayResponses &+= 1
            }
        }
        if client { fromClient.feed(chunk, message) } else { fromServer.feed(chunk, message) }
        if counts.gaveUp {
            // The message that was not DNS and what followed it are counted; nothing is held.
            finish()
            waiting = [:]
        }
    }

    /// The stream ended: a message begun and not finished is counted as not read.
    public mutating func finish() {
        counts.bytesNotRead &+= UInt64(fromClient.bytesPending + fromServer.bytesPending)
        fromClient = DNSTCPFraming()
        fromServer = DNSTCPFraming()
    }
}

/// A response read from DNS over TCP, with the question its query asked: what the tunnel reads
/// names from (`DNSAnswerMatch`, `LiveHostNames`), as it does a UDP answer.
public struct TCPDNSAnswer: Sendable, Equatable {
    /// The whole DNS message (without its 2-byte length).
    public var message: [UInt8]
    /// The first question of the query with the response's ID.
    public var asked: DNSQuestionEntry

    public init(message: [UInt8], asked: DNSQuestionEntry) {
        self.message = message
        self.asked = asked
    }
}

import FlowStore
import FlowTerms
import HTTPReading
import Proxy
import Recording
import TVHome

/// `tv request ID [--curl] [--json]` from the stores to what is printed: the exchange's row, and
/// when content was kept for its flow, its recorded request and response (read from the turns
/// with `HTTPReader`, matched by HTTP/2 stream or HTTP/1 order).
public struct RequestReading: KeptContentReading {
    /// What to print.
    public enum Shape: Sendable, Equatable {
        /// The exchange with its timing and (when kept) headers and bodies; JSON with `json`;
        /// bodies whole with `full`, else previews (as `tv turns`).
        case shown(json: Bool, full: Bool)
        /// An equivalent curl command.
        case curl
    }

    /// The exchange's id (`tv requests`' ID column).
    public let id: Int64
    public let shape: Shape

    public init(id: Int64, shape: Shape) {
        self.id = id
        self.shape = shape
    }

    /// - Throws: `ContentRefusal.noRequest` when there is no such exchange; `FlowStoreError`
    ///   when a store cannot be read.
    public func run(flows: FlowStore, content: ContentStore, to output: some CommandOutput) throws {
        guard let exchange = try flows.exchange(id: id) else { throw ContentRefusal.noRequest(id) }
        let conversation = try RequestReading.recordedConversation(flow: exchange.flowID, content: content)
        let recorded = conversation.flatMap { RequestReading.match(exchange, in: $0.exchanges) }
        let stopped = conversation?.problems.first
        let flow = try flows.flow(id: exchange.flowID)
        let destination = flow.flatMap { RequestDestination.differing(exchange, on: $0) }
        switch shape {
        case .curl:
            // A row without an authority (a request tv refused before reading its Host) is sent
            // where its connection went (it read `https://localhost/…`: a re-check).
            let fallback = flow.map { Endpoint(address: $0.host ?? $0.serverAddress, port: UInt16(clamping: $0.serverPort)).description }
            let curl = CurlCommand(exchange, request: recorded?.request, flowContentKept: conversation != nil, destination: destination,
                                   fallbackAuthority: fallback)
            if let note = curl.note { output.note("tv: " + note) }
            output.line(curl.command)
        case .shown(json: true, _):
            var text = ""
            var detail = RequestDetailPresentation(exchange: exchange, recorded: recorded, stoppedReading: stopped)
            detail.destination = destination
            detail.writeJSON(reader: BoundedBodyReader()) { text += $0 }
            output.line(text)
        case .shown(json: false, let full):
            var detail = RequestDetailPresentation(exchange: exchange, recorded: recorded, full: full, stoppedReading: stopped)
            detail.flowContentKept = conversation != nil
            detail.destination = destination
            let reader = BoundedBodyReader()
            output.lines { line in detail.write(reader: reader, line) }
        }
    }

    /// The recorded request and response of `exchange`, when its flow's turns were kept and read as HTTP.
    static func recordedExchange(_ exchange: ExchangeRecord, content: ContentStore) throws -> HTTPExchange? {
        try recordedExchanges(flow: exchange.flowID, content: content).flatMap { match(exchange, in: $0) }
    }

    /// The exchanges read from flow `flow`'s kept turns; nil when none were kept or they do not read as HTTP.
    static func recordedExchanges(flow: Int64, content: ContentStore) throws -> [HTTPExchange]? {
        try recordedConversation(flow: flow, content: content)?.exchanges
    }

    /// Flow `flow`'s kept turns read as HTTP (exchanges, and where reading stopped); nil when
    /// none were kept or they do not read as HTTP.
    static func recordedConversation(flow: Int64, content: ContentStore) throws -> HTTPConversation? {
        let indexed = try content.turns(flow: flow)
        guard !indexed.isEmpty else { return nil }
        let recorded = indexed.compactMap { turn in (try? content.bytes(of: turn)).map { RecordedTurn(turn: turn.turn, bytes: $0) } }
        guard case let .conversation(conversation) = HTTPReader.read(recorded) else { return nil }
        return conversation
    }

    /// The recorded exchange that is `exchange`: HTTP/2 by stream id (pushed streams are never
    /// rows), HTTP/1 the `sequence`-th one with a request. Pure.
    static func match(_ exchange: ExchangeRecord, in recorded: [HTTPExchange]) -> HTTPExchange? {
        if let stream = exchange.streamID {
            return recorded.first { $0.streamID.map(Int64.init) == stream && !$0.pushed }
        }
        let requests = recorded.filter { $0.request != nil }
        return exchange.sequence <= requests.count ? requests[exchange.sequence - 1] : nil
    }
}

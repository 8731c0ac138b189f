import FlowStore
import FlowTerms
import HTTPReading
import Proxy
import Recording
import TVHome

/// `tv request ID [--curl] [--json]` from the stores to what is printed: the exchange's row, and
/// when content was kept for its flow, its recorded request and response (read from the turns
/// with `HTTPReader`, paired with the flow's rows by `ExchangeRowMatch`), else why not
/// (`RequestContentAbsence`).
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
        guard let exchange = try flows.exchange(id: id) else { throw ContentRefusal.noRequest(id, highest: try? flows.highestExchangeID()) }
        let flow = try flows.flow(id: exchange.flowID)
        let kept = try RequestReading.keptReading(flow: exchange.flowID, content: content)
        var recorded: HTTPExchange?
        var conversation: HTTPConversation?
        if case let .conversation(read)? = kept?.result {
            conversation = read
            recorded = ExchangeRowMatch.recorded(for: exchange, in: read.exchanges, rows: try flows.exchanges(ofFlow: exchange.flowID).exchanges,
                                                 flowStart: flow?.startTime ?? 0)
        }
        let absence = recorded == nil
            ? RequestContentAbsence.of(exchange, read: kept?.result, keptFrom: kept?.from, flowStart: flow?.startTime ?? 0) : nil
        let stopped = conversation?.problems ?? []
        let destination = flow.flatMap { RequestDestination.differing(exchange, on: $0) }
        switch shape {
        case .curl:
            // A row without an authority (a request tv refused before reading its Host) is sent
            // where its connection went (it read `https://localhost/…`: a re-check).
            let fallback = flow.map { Endpoint(address: $0.host ?? $0.serverAddress, port: UInt16(clamping: $0.serverPort)).description }
            let curl = CurlCommand(exchange, request: recorded?.request, absence: absence, destination: destination, fallbackAuthority: fallback)
            if let note = curl.note { output.note("tv: " + note) }
            output.line(curl.command)
        case .shown(json: true, _):
            var text = ""
            var detail = RequestDetailPresentation(exchange: exchange, recorded: recorded, stoppedReading: stopped)
            detail.flowContentKept = conversation != nil
            detail.recordingStopped = conversation?.recordingStopped ?? []
            detail.contentAbsence = absence
            detail.destination = destination
            detail.writeJSON(reader: BoundedBodyReader()) { text += $0 }
            output.line(text)
        case .shown(json: false, let full):
            var detail = RequestDetailPresentation(exchange: exchange, recorded: recorded, full: full, stoppedReading: stopped)
            detail.flowContentKept = conversation != nil
            detail.recordingStopped = conversation?.recordingStopped ?? []
            detail.contentAbsence = absence
            detail.destination = destination
            let reader = BoundedBodyReader()
            output.lines { line in detail.write(reader: reader, line) }
        }
    }

    /// Flow `flow`'s kept turns read as HTTP, and when the first of them started (µs since the
    /// flow's first byte); nil when none were kept. Turns whose bytes cannot be read are left out.
    static func keptReading(flow: Int64, content: ContentStore) throws -> (result: HTTPReadResult, from: Int64)? {
        let indexed = try content.turns(flow: flow)
        guard let first = indexed.first else { return nil }
        let recorded = indexed.compactMap { turn in (try? content.bytes(of: turn)).map { RecordedTurn(turn: turn.turn, bytes: $0) } }
        return (HTTPReader.read(recorded), first.turn.startOffset)
    }

    /// The exchanges read from flow `flow`'s kept turns; nil when none were kept or they do not read as HTTP.
    static func recordedExchanges(flow: Int64, content: ContentStore) throws -> [HTTPExchange]? {
        guard case let .conversation(conversation)? = try keptReading(flow: flow, content: content)?.result else { return nil }
        return conversation.exchanges
    }
}

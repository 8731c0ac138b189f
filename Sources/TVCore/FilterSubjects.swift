import FlowFilter
import FlowStore
import Foundation
import HTTPReading

/// A flow row as the filter sees it: a connection, so the domain (host name, else the server's
/// address), the addresses, the transport and whether it failed; it holds no request, so the
/// operators about requests (`~m`, `~u`, `~c`, `~t`, `~h`, `~b`, `~q`, `~s`) are unanswered.
public struct FlowRowSubject: FilterSubject {
    public let record: FlowRecord

    public init(_ record: FlowRecord) {
        self.record = record
    }

    public func texts(_ field: FilterField) -> [String]? {
        switch field {
        case .domain: return [record.host ?? record.serverAddress]
        case .source: return [filterAddress(record.clientAddress, port: record.clientPort)]
        case .destination: return [filterAddress(record.serverAddress, port: record.serverPort)]
        default: return nil
        }
    }

    public func flag(_ flag: FilterFlag) -> Bool? {
        switch flag {
        case .failed: return record.status == .failed
        case .tcp: return record.transport == .tcp
        case .udp: return record.transport == .udp
        case .hasResponse: return nil
        }
    }
}

/// One exchange read from a flow's kept content (a HAR entry to be), as the filter sees it:
/// the request's method and URL as the HAR writes them, the response's status, Content-Type,
/// header lines `name: value` (HTTP/2 pseudo-headers left out, as mitmproxy does), bodies
/// decoded through `reader` (the first `bodyLimit` bytes, read as UTF-8), and the flow's
/// addresses. Bodies are decoded only when an operator asks.
public struct KeptExchangeSubject: FilterSubject {
    /// The first bytes of a decoded body that `~b` searches.
    public static let bodyLimit = 1 << 20

    public let flow: HARFlow
    public let record: FlowRecord
    public let exchange: HTTPExchange
    public let reader: BoundedBodyReader

    public init(flow: HARFlow, record: FlowRecord, exchange: HTTPExchange, reader: BoundedBodyReader) {
        self.flow = flow
        self.record = record
        self.exchange = exchange
        self.reader = reader
    }

    public func texts(_ field: FilterField) -> [String]? {
        let version = flow.conversation.version
        switch field {
        case .domain:
            guard let request = exchange.request else { return [] }
            let url = HARExport.methodAndURL(request, flow: flow, version: version).url
            return [URLComponents(string: url)?.host ?? record.host ?? record.serverAddress]
        case .method:
            return exchange.request.map { [HARExport.methodAndURL($0, flow: flow, version: version).method] } ?? []
        case .url:
            return exchange.request.map { [HARExport.methodAndURL($0, flow: flow, version: version).url] } ?? []
        case .statusCode:
            return exchange.response.map { [String(HARExport.status($0, version: version))] } ?? []
        case .requestContentType: return exchange.request?.headers.all("content-type") ?? []
        case .responseContentType: return exchange.response?.headers.all("content-type") ?? []
        case .requestHeaders: return Self.lines(exchange.request)
        case .responseHeaders: return Self.lines(exchange.response)
        case .requestBody: return body(exchange.request)
        case .responseBody: return body(exchange.response)
        case .source: return [filterAddress(record.clientAddress, port: record.clientPort)]
        case .destination: return [filterAddress(record.serverAddress, port: record.serverPort)]
        }
    }

    public func flag(_ flag: FilterFlag) -> Bool? {
        switch flag {
        case .hasResponse: return exchange.response != nil
        case .failed: return exchange.resetBy != nil || record.status == .failed
        case .tcp: return record.transport == .tcp
        case .udp: return record.transport == .udp
        }
    }

    static func lines(_ message: HTTPMessage?) -> [String] {
        (message?.headers ?? []).filter { !$0.name.hasPrefix(":") }.map { "\($0.name): \($0.value)" }
    }

    func body(_ message: HTTPMessage?) -> [String] { Self.body(message, reader: reader) }

    /// The first `bodyLimit` bytes of the decoded body, as UTF-8; none for no message or an empty body.
    static func body(_ message: HTTPMessage?, reader: BoundedBodyReader) -> [String] {
        guard let message, !message.body.transferred.isEmpty else { return [] }
        let reading = reader.measure(message.body, keeping: bodyLimit, classifying: false)
        return [String(decoding: reading.head, as: UTF8.self)]
    }
}

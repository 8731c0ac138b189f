import FlowStore
import FlowTerms
import HTTPReading
import Testing
@testable import TVCore

/// A request row whose HTTP/2 stream the client reset (`ExchangeState.cancelled`) as `tv
/// requests`, `tv request`, the HAR and `~e` say it: a rapid reset's rows read "incomplete: its
/// end was never read" beside the 200 kept content showed (a hostile-input trial).
@Suite struct CancelledRequestPresentationTests {
    static let row = ExchangeRecord(
        id: 42, flowID: 7, sequence: 3, streamID: 5, httpVersion: "HTTP/2", method: "GET", scheme: "https", authority: "example.com",
        path: "/rr1", status: 200, responseBodyBytes: 0, responseWireBytes: 0, requestTime: RequestPresentationTests.start,
        responseTime: RequestPresentationTests.start + 2_000, endTime: RequestPresentationTests.start + 2_000, state: .cancelled,
        requestEndTime: RequestPresentationTests.start)

    @Test("the list says '200 cancelled' (or 'cancelled' without a head), the detail and the HAR the sentence, and ~e matches it")
    func words() throws {
        #expect(RequestListPresentation.status(Self.row) == "200 cancelled")
        var headless = Self.row
        headless.status = nil
        #expect(RequestListPresentation.status(headless) == "cancelled")
        let lines = RequestDetailPresentation(exchange: Self.row, recorded: nil).factLines()
        #expect(lines.contains("  status 200 — cancelled: the client reset the stream after its request, before the response ended (HTTP/2 RST_STREAM)"),
                "\(lines)")
        #expect(HARRowEntry.comment(Self.row)
                == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; HTTP/2 stream 5; cancelled: the client reset the stream after its request, before the response ended (HTTP/2 RST_STREAM)")
        #expect(RequestListPresentation.json(Self.row).serialized().contains("\"state\":\"cancelled\""))
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let store = try FlowStore(path: folder.home.databasePath)
        defer { store.close() }
        #expect(ExchangeRowSubject(Self.row, context: ExchangeFilterContext(store: store, content: nil)).flag(.failed) == true)
    }
}

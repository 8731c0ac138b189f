import FlowTerms
import HTTPReading
import Recording
import Testing
@testable import TVCore

/// Why `tv request` shows no kept request and response for a row (`RequestContentAbsence`): a
/// trial after `tv content delete` read "content keeping was off when it was made" of HTTP/2
/// rows whose bytes were kept, and "the budget ran out" of a request whose bytes were deleted.
@Suite struct RequestContentAbsenceTests {
    static let start: Int64 = 1_764_620_000_000_000
    static let deleted = DeletedStart(firstKeptTurn: 5, firstKeptOffset: 4_000_000, firstTurnCut: true)

    static func row(at offset: Int64) -> ExchangeRecord {
        ExchangeRecord(id: 9, flowID: 7, sequence: 1, streamID: 1, httpVersion: "HTTP/2", method: "GET", path: "/headers",
                       requestTime: start + offset)
    }

    @Test("each case from what is kept: none, not HTTP, HTTP/2 unreadable after a deleted start, made before it, made before keeping began, reading stopped, after what is kept")
    func decisions() {
        let before = Self.row(at: 1_000), after = Self.row(at: 4_500_000)
        #expect(RequestContentAbsence.of(before, read: nil, keptFrom: nil, flowStart: Self.start) == .noneKept)
        #expect(RequestContentAbsence.of(before, read: .notHTTP(reason: "Not HTTP."), keptFrom: 0, flowStart: Self.start) == .notHTTP("Not HTTP."))
        let unreadable = HTTPReadResult.startDeleted(Self.deleted, http2: true)
        #expect(RequestContentAbsence.of(after, read: unreadable, keptFrom: 4_000_000, flowStart: Self.start) == .startDeleted(Self.deleted, http2: true))
        #expect(RequestContentAbsence.of(before, read: unreadable, keptFrom: 4_000_000, flowStart: Self.start) == .madeBeforeDeletedStart(Self.deleted))
        var afterDelete = HTTPConversation(version: "HTTP/1.1")
        afterDelete.deletedStart = Self.deleted
        #expect(RequestContentAbsence.of(before, read: .conversation(afterDelete), keptFrom: 4_000_000, flowStart: Self.start)
                == .madeBeforeDeletedStart(Self.deleted))
        #expect(RequestContentAbsence.of(after, read: .conversation(afterDelete), keptFrom: 4_000_000, flowStart: Self.start) == .pastKept)
        // Kept from turn 1, which began after the row: keeping was switched on while it was open.
        let fromTurnOne = HTTPReadResult.conversation(HTTPConversation(version: "HTTP/1.1"))
        #expect(RequestContentAbsence.of(before, read: fromTurnOne, keptFrom: 4_000_000, flowStart: Self.start) == .madeBeforeKeeping)
        #expect(RequestContentAbsence.of(after, read: fromTurnOne, keptFrom: 4_000_000, flowStart: Self.start) == .pastKept)
        var stopped = HTTPConversation(version: "HTTP/1.1")
        let problem = HTTPConversation.ReadingProblem(direction: .clientToServer, turn: 3, reason: "The recording budget stopped this side in turn 3; nothing after it was recorded.")
        stopped.problems = [problem]
        #expect(RequestContentAbsence.of(after, read: .conversation(stopped), keptFrom: 0, flowStart: Self.start) == .readingStopped(problem))
    }

    @Test("the sentences, rendered once each")
    func sentences() {
        #expect(RequestContentAbsence.startDeleted(Self.deleted, http2: true).sentence(flowID: 7)
                == "No headers or bodies can be shown for this request, though its bytes are kept: the start of this connection's kept content was deleted (turns 1–4 and the beginning of turn 5, by `tv content delete` while the connection was open), so its HTTP/2 cannot be read from the middle: header compression state is lost with it. `tv turns 7` shows every byte that was kept.")
        #expect(RequestContentAbsence.madeBeforeDeletedStart(Self.deleted).sentence(flowID: 7)
                == "This request is not in the content kept of its connection (the facts above are its row's): it was made before what is kept begins — the start of this connection's kept content was deleted (turns 1–4 and the beginning of turn 5, by `tv content delete` while the connection was open). `tv turns 7` shows every byte that was kept.")
        #expect(RequestContentAbsence.madeBeforeKeeping.sentence(flowID: 7)
                == "This request is not in the content kept of its connection (the facts above are its row's): it was made before keeping content began on it (content keeping was switched on while the connection was open). `tv turns 7` shows every byte that was kept.")
        #expect(RequestContentAbsence.notHTTP("The server spoke first.").sentence(flowID: 7)
                == "No headers or bodies can be shown for this request: its connection's kept turns are not read as HTTP — The server spoke first. `tv turns 7` shows every byte that was kept.")
        #expect(RequestContentAbsence.noneKept.sentence(flowID: 7) == RequestDetailPresentation.noneKept + " " + RequestDetailPresentation.keptWithoutContent)
        // `tv request --json`'s absence is the same sentence, the flow's content kept or not.
        var detail = RequestDetailPresentation(exchange: Self.row(at: 4_500_000), recorded: nil)
        detail.contentAbsence = .startDeleted(Self.deleted, http2: true)
        #expect(detail.absence == RequestContentAbsence.startDeleted(Self.deleted, http2: true).sentence(flowID: 7))
    }
}

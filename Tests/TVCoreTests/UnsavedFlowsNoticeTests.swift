import FlowStore
import Recording
import Testing
import TVHome
@testable import TVCore

/// What a reading command and `tv diag` say while a live session is not saving flows (a trial's
/// full disk: `tv flows` showed the last saved rows as open, `tv storage` counted 1,052
/// connections against 6,326 accepted, `tv diag` led with "Inspection is working").
@Suite("the newest flows missing: one notice for tv flows, tv storage and tv diag")
struct UnsavedFlowsNoticeTests {
    static let cause = DataFolderFull.sentence(cannotGrow: "/d/tunnelvision.sqlite3")

    func values(waiting: Int, givenUp: Int = 0, failing: Bool) -> [String: String] {
        var losses = RecordingLosses()
        losses.flowsWaiting = waiting
        losses.flowsNotSaved = givenUp
        losses.flowsFailing = failing
        losses.flowWritesFailed = failing ? 3 : 0
        losses.lastFlowError = failing ? Self.cause : nil
        var values = losses.values
        values["pid"] = "4242"
        return values
    }

    @Test("said while the session fails to save flows, or holds some in memory; with the failure's own sentence; not when it saves")
    func notice() throws {
        let notice = try #require(UnsavedFlowsNotice(values: values(waiting: 3_569, givenUp: 12, failing: true)))
        #expect(notice.pid == 4242)
        #expect(notice.sentence == "The newest flows are missing: the running tv session (pid 4242) cannot save them (3,569 wait in memory, 12 given up so far; rows shown open may have ended since). " + Self.cause)
        #expect(notice.json.serialized() == #"{"pid":4242,"flowsWaiting":3569,"flowsGivenUp":12,"cause":"\#(Self.cause)","sentence":"\#(notice.sentence)"}"#)
        #expect(UnsavedFlowsNotice(values: values(waiting: 0, failing: false)) == nil)
        #expect(UnsavedFlowsNotice(values: ["pid": "1"]) == nil)
        #expect(UnsavedFlowsNotice(values: values(waiting: 7, failing: false))?.sentence
                == "The newest flows are missing: the running tv session (pid 4242) cannot save them (7 wait in memory, 0 given up so far; rows shown open may have ended since).")
        #expect(UnsavedFlowsNotice.json([]).serialized() == "[]")
    }

    @Test("tv diag leads with it, says the waiting flows as missing, and lists the failure first under the last errors")
    func diagnostics() {
        var v = values(waiting: 3_569, failing: true)
        v["inspection"] = "on"
        v["ca"] = "loaded"
        v["offered.total"] = "4632"
        v["offered.inspected"] = "4632"
        let lines = DiagnosticsPresentation.lines(v)
        #expect(lines[0] == "The newest flows are missing: the running tv session (pid 4242) cannot save them (3,569 wait in memory, 0 given up so far; rows shown open may have ended since). " + Self.cause)
        #expect(lines[1] == "Inspection is working: 4,632 of 4,632 TLS connections offered were inspected.")
        #expect(lines.contains("  flows               3,569 waiting in memory, not in the history yet; 0 given up (never saved)"))
        let errors = lines.firstIndex(of: "Last errors")
        #expect(errors.map { lines[$0 + 1] } == "  flows not saved: " + Self.cause)
        // Saving again: nothing leads, and the last errors are the connections' (none here).
        let fine = DiagnosticsPresentation.lines(["inspection": "on", "ca": "loaded", "recording.flowsNotSaved": "0", "recording.flowsFailing": "off"])
        #expect(fine[0].hasPrefix("Inspection is on, and no connection has been offered"))
        #expect(fine.last == "  none")
        #expect(DiagnosticsPresentation.json(v).serialized().contains(#""unsavedFlows":[{"pid":4242,"#))
    }
}

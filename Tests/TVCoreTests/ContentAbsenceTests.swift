import FlowStore
import Testing
@testable import TVCore

@Suite struct ContentAbsenceTests {
    @Test("a failed flow's reason: said elsewhere, not again under tv flow's status line (a trial read it twice)")
    func failedReasonOnce() {
        let failed = ContentAbsence.failed("tv could not connect to a.test:443 (connection refused)")
        #expect(failed.sentence(flowID: 7) == "Nothing was kept: the connection failed before content was recorded (tv could not connect to a.test:443 (connection refused)).")
        #expect(failed.sentence(flowID: 7, context: .flowDetail) == "Nothing was kept: the connection failed before content was recorded (the status above says why).")
    }
}

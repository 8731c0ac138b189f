import Testing
@testable import TVCore

@Suite struct InterruptedFlowsNoticeTests {
    @Test("nothing closed, nothing said; one and many in words")
    func sentences() {
        #expect(InterruptedFlowsNotice.sentence((0, 0)) == nil)
        #expect(InterruptedFlowsNotice.sentence((1, 0)) == nil)
        #expect(InterruptedFlowsNotice.sentence((1, 1)) == "1 flow left open by an earlier tv session that ended without stopping (killed or crashed) is now closed as interrupted, at its last recorded activity (tv flows --status interrupted).")
        #expect(InterruptedFlowsNotice.sentence((3, 62)) == "62 flows left open by 3 earlier tv sessions that ended without stopping (killed or crashed) are now closed as interrupted, at their last recorded activity (tv flows --status interrupted).")
    }
}

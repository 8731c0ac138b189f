import FlowStore
import Testing
@testable import TVCore

@Suite struct InterruptedFlowsNoticeTests {
    @Test("nothing closed, nothing said; one and many in words")
    func sentences() {
        #expect(InterruptedFlowsNotice.sentence(FlowWriterRecovery()) == nil)
        #expect(InterruptedFlowsNotice.sentence(FlowWriterRecovery(deadWriters: 1)) == nil)
        #expect(InterruptedFlowsNotice.sentence(FlowWriterRecovery(deadWriters: 1, interruptedFlows: 1)) == "1 flow left open by an earlier tv session that ended without stopping (killed or crashed) is now closed as interrupted, at its last recorded activity (tv flows --status interrupted).")
        #expect(InterruptedFlowsNotice.sentence(FlowWriterRecovery(deadWriters: 3, interruptedFlows: 62)) == "62 flows left open by 3 earlier tv sessions that ended without stopping (killed or crashed) are now closed as interrupted, at their last recorded activity (tv flows --status interrupted).")
    }

    /// Trial 43: a clean stop on a full disk said "4 flows without their last update", and the
    /// next start called them left by a session "killed or crashed".
    @Test("a session that stopped unable to save its flows' end is said so, apart from one killed")
    func stoppedUnableToSave() {
        #expect(InterruptedFlowsNotice.sentence(FlowWriterRecovery(stoppedWriters: 1, stoppedFlows: 4)) == "4 flows left open by an earlier tv session that stopped unable to save their end (the disk holding the data folder was full, or its database could not be written) are now closed as interrupted, at their last recorded activity (tv flows --status interrupted).")
        #expect(InterruptedFlowsNotice.sentence(FlowWriterRecovery(deadWriters: 1, interruptedFlows: 2, stoppedWriters: 2, stoppedFlows: 1)) == "2 flows left open by an earlier tv session that ended without stopping (killed or crashed) are now closed as interrupted, at their last recorded activity (tv flows --status interrupted). 1 flow left open by 2 earlier tv sessions that stopped unable to save its end (the disk holding the data folder was full, or its database could not be written) is now closed as interrupted, at its last recorded activity (tv flows --status interrupted).")
    }
}

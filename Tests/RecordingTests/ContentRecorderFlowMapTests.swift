import Foundation
import Testing
@testable import Recording
import FlowTerms

/// The proxy's path into recording: `ContentRecorder.record(flow:…)` and `flowEnded(flow:)`
/// over the one map from flow id to its recorder.
@Suite struct ContentRecorderFlowMapTests {
    let up = Direction.clientToServer
    let down = Direction.serverToClient

    func session(_ home: TestHome, policy: ContentPolicy) throws -> ContentRecorder {
        ContentRecorder(writer: try ContentWriter(home.configuration(expiry: policy.expiry), clock: ManualContentClock(start: testEpoch)),
                        policy: policy)
    }

    /// A flow's recorder is made at its first chunk and kept until the flow ends, even once it
    /// stopped recording (both sides cut): later chunks are not recorded again as new turns.
    @Test func aFlowKeepsItsRecorderUntilItEnds() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home, policy: ContentPolicy(keep: true, flowBudget: 4))
        // Each answer says whether the proxy should hand the flow's next chunks.
        #expect(bytes(6).withUnsafeBytes { session.record(flow: 7, up, at: 0, $0) })
        #expect(session.activeFlows == 1)
        #expect(bytes(5).withUnsafeBytes { session.record(flow: 7, down, at: 1, $0) })
        #expect(session.activeFlows == 1, "the cut turn still counts what it sees")
        #expect(!bytes(3).withUnsafeBytes { session.record(flow: 7, up, at: 2, $0) })
        #expect(session.activeFlows == 0, "both sides cut and no turn counting: the flow's recorder ended itself")
        #expect(!bytes(2).withUnsafeBytes { session.record(flow: 7, down, at: 3, $0) })
        session.flowEnded(flow: 7)
        session.flowEnded(flow: 7)  // a second end is harmless
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 7).map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 4, seenBytes: 6, cutBy: .flowBudget),
            Turn(number: 2, direction: down, startOffset: 1, keptBytes: 4, seenBytes: 5, cutBy: .flowBudget),
        ])
    }

    /// The connection's way in: the flow's own recorder (`flowRecorder(flow:)`, asked once) is
    /// the one `record(flow:…)` finds, with the same answers; the flow still ends through
    /// `flowEnded`. No recorder is given while content is not kept.
    @Test func aFlowsOwnRecorderIsTheOneTheMapHolds() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home, policy: ContentPolicy(keep: true, flowBudget: 4))
        let held = try #require(session.flowRecorder(flow: 7))
        #expect(held === session.flowRecorder(flow: 7))
        #expect(session.activeFlows == 1)
        #expect(bytes(6).withUnsafeBytes { held.record(direction: up, offsetMicros: 0, bytes: $0) })
        #expect(bytes(5).withUnsafeBytes { session.record(flow: 7, down, at: 1, $0) })
        #expect(!bytes(3).withUnsafeBytes { held.record(direction: up, offsetMicros: 2, bytes: $0) })
        #expect(session.activeFlows == 0)
        session.flowEnded(flow: 7)
        try session.apply(ContentPolicy(keep: false))
        #expect(session.flowRecorder(flow: 8) == nil)
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 7).map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 4, seenBytes: 6, cutBy: .flowBudget),
            Turn(number: 2, direction: down, startOffset: 1, keptBytes: 4, seenBytes: 5, cutBy: .flowBudget),
        ])
    }

    /// Switched off, then on again: a flow that was stopped stays unrecorded; a new flow is
    /// recorded.
    @Test func aStoppedFlowIsNotRecordedAgainWhenContentIsSwitchedBackOn() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home, policy: ContentPolicy(keep: true))
        bytes(2).withUnsafeBytes { session.record(flow: 1, up, at: 0, $0) }
        try session.apply(ContentPolicy(keep: false))
        bytes(3).withUnsafeBytes { session.record(flow: 2, up, at: 0, $0) }
        try session.apply(ContentPolicy(keep: true))
        bytes(4).withUnsafeBytes { session.record(flow: 1, down, at: 1, $0) }
        bytes(5).withUnsafeBytes { session.record(flow: 3, down, at: 0, $0) }
        #expect(session.activeFlows == 1)
        for flow: UInt64 in [1, 2, 3] { session.flowEnded(flow: flow) }
        #expect(session.activeFlows == 0)
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 1).map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 2, seenBytes: 2, incomplete: true),
        ])
        #expect(try store.turns(flow: 2).map(\.turn) == [])
        #expect(try store.turns(flow: 3).map(\.turn) == [
            Turn(number: 1, direction: down, startOffset: 0, keptBytes: 5, seenBytes: 5),
        ])
    }
}

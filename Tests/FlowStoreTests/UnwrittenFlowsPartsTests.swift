import FlowTerms
import Testing
@testable import FlowStore

/// What the flow writer keeps while writes fail (`UnwrittenFlows`): each flow's program travels
/// with it, and the backlog goes back in parts (`FullDiskWrites`), put back as it was when a
/// part fails.
@Suite("the flows kept while writes fail: programs with their flows, parts, put back")
struct UnwrittenFlowsPartsTests {
    static let curl = FlowProgram.known(ProgramIdentity(pid: 4242, command: "curl", executable: "/usr/bin/curl", uid: 0, user: "root"))

    func flow(_ id: Int64) -> FlowRecord { sampleFlow(start: id * 10).with(id: id) }

    func program(_ pid: Int32) -> FlowProgram {
        .known(ProgramIdentity(pid: pid, command: "p\(pid)", executable: nil, uid: 0, user: nil))
    }

    func exchange(_ flow: Int64, _ sequence: Int) -> ExchangeRecord {
        ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", path: "/", requestTime: 1, state: .complete)
    }

    /// The trial's loss: past the limit the oldest flows were given up but their programs stayed,
    /// filling the programs' room, and the newest flows' programs were refused (12,822 of the
    /// 16,384 flows written afterwards had none).
    @Test("past the limit a flow is given up with its program; the flows kept keep theirs")
    func programsGoWithTheirFlows() {
        var set = UnwrittenFlows(limit: 2)
        #expect(set.keep([.opened(flow(1)), .program(flowID: 1, program(1)), .opened(flow(2)), .program(flowID: 2, program(2))]) == [])
        #expect(set.keep([.opened(flow(3)), .program(flowID: 3, program(3))])
                == [UnwrittenFlows.Kept(record: flow(1), program: program(1), events: 2)])
        #expect(set.keep([.opened(flow(4)), .program(flowID: 4, program(4))]).map(\.record) == [flow(2)])
        // Counted by the writer with the flow (a row that lacks it, or no row at all).
        #expect(set.programsGivenUp == 0)
        #expect(set.take(upTo: .max).events == [.updated(flow(3)), .program(flowID: 3, program(3)), .updated(flow(4)), .program(flowID: 4, program(4))])
    }

    @Test("a program whose flow is not kept waits alone, and joins its flow when the flow's next state fails too")
    func aLoneProgramJoinsItsFlow() {
        var set = UnwrittenFlows(limit: 5)
        _ = set.keep([.program(flowID: 7, Self.curl), .program(flowID: 8, program(8))])
        #expect(set.count == 0 && set.items == 2)
        _ = set.keep([.closed(flow(7))])
        #expect(set.count == 1 && set.items == 2 && set.representedEvents == 3)
        #expect(set.take(upTo: .max).events == [.updated(flow(7)), .program(flowID: 7, Self.curl), .program(flowID: 8, program(8))])
    }

    @Test("programs whose flows are not kept: at most the limit, the oldest given up and counted")
    func lonePrograms() {
        var set = UnwrittenFlows(limit: 2)
        _ = set.keep([.program(flowID: 1, program(1)), .program(flowID: 2, program(2)), .program(flowID: 1, program(11)), .program(flowID: 3, program(3))])
        #expect(set.programsGivenUp == 1)
        #expect(set.take(upTo: .max).events == [.program(flowID: 2, program(2)), .program(flowID: 3, program(3))])
    }

    @Test("parts: the oldest flows with their programs, then exchanges, then the other programs; each part counts its events")
    func parts() {
        var set = UnwrittenFlows(limit: 10)
        _ = set.keep([.opened(flow(1)), .updated(flow(1)), .opened(flow(2)), .program(flowID: 2, Self.curl), .opened(flow(3)),
                      .exchange(exchange(1, 0)), .exchange(exchange(1, 1)), .exchange(exchange(1, 0)), .program(flowID: 9, program(9))])
        #expect(set.items == 6 && set.representedEvents == 9)
        let first = set.take(upTo: 2)
        #expect(first.events == [.updated(flow(1)), .updated(flow(2)), .program(flowID: 2, Self.curl)])
        #expect(first.represented == 4)
        let second = set.take(upTo: 2)
        #expect(second.events == [.updated(flow(3)), .exchange(exchange(1, 0))])
        #expect(second.represented == 2)
        // The last part takes what the exchanges' collapsed events stood for.
        let third = set.take(upTo: 2)
        #expect(third.events == [.exchange(exchange(1, 1)), .program(flowID: 9, program(9))])
        #expect(third.represented == 3)
        #expect(set.isEmpty && set.representedEvents == 0)
    }

    @Test("a part put back is as it was: taken again, the same events in the same order, with what came since after")
    func putBack() {
        var set = UnwrittenFlows(limit: 10)
        _ = set.keep([.opened(flow(1)), .opened(flow(2)), .exchange(exchange(2, 0)), .program(flowID: 9, program(9))])
        let whole = set
        let part = set.take(upTo: 3)
        #expect(part.events == [.updated(flow(1)), .updated(flow(2)), .exchange(exchange(2, 0))])
        set.putBack(part)
        #expect(set.takingAll() == whole.takingAll())
        #expect(set.take(upTo: 3) == part)
        set.putBack(part)
        _ = set.keep([.updated(flow(3)), .program(flowID: 10, program(10))])
        #expect(set.take(upTo: .max).events == [.updated(flow(1)), .updated(flow(2)), .updated(flow(3)), .exchange(exchange(2, 0)),
                                                .program(flowID: 9, program(9)), .program(flowID: 10, program(10))])
    }

    @Test("the full-disk schedule: parts and an emptied WAL from a full disk's failure until a commit finds 128 MiB free")
    func fullDiskWrites() {
        #expect(FullDiskWrites.roomToLeave == 134_217_728)
        var writes = FullDiskWrites()
        var asked = 0
        let free: (Int64?) -> () -> Int64? = { value in { asked += 1; return value } }
        #expect(writes.partSize == nil)
        #expect(writes.wrote(failure: nil, freeBytes: free(0)) == .nothing)
        #expect(writes.wrote(failure: .busy(path: "f"), freeBytes: free(0)) == .nothing)
        #expect(writes.partSize == nil && asked == 0)
        #expect(writes.wrote(failure: .diskFull(path: "f"), freeBytes: free(0)) == .emptyJournal)
        #expect(writes.partSize == 256 && asked == 0)
        #expect(writes.wrote(failure: .busy(path: "f"), freeBytes: free(0)) == .nothing)
        #expect(writes.wrote(failure: nil, freeBytes: free(134_217_727)) == .emptyJournal)
        #expect(writes.wrote(failure: nil, freeBytes: free(nil)) == .emptyJournal)
        #expect(writes.partSize == 256 && asked == 2)
        #expect(writes.wrote(failure: nil, freeBytes: free(134_217_728)) == .emptyJournal)
        #expect(writes.partSize == nil)
        #expect(writes.wrote(failure: nil, freeBytes: free(0)) == .nothing)
        #expect(asked == 3)
    }
}

extension UnwrittenFlows {
    /// A copy's whole content, taken.
    func takingAll() -> Part {
        var copy = self
        return copy.take(upTo: .max)
    }
}

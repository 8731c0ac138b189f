import Foundation
import Proxy
import Synchronization
import FlowTerms

/// A FlowSink that keeps everything, for assertions.
final class CollectingSink: FlowSink {
    struct Record { var opened: FlowFacts?; var updates: [FlowFacts] = []; var closed: FlowFacts? }
    private let state = Mutex<[UInt64: Record]>([:])
    private let order = Mutex<[UInt64]>([])

    func flowOpened(_ facts: FlowFacts) {
        state.withLock { $0[facts.id, default: Record()].opened = facts }
        order.withLock { $0.append(facts.id) }
    }
    func flowUpdated(_ facts: FlowFacts) { state.withLock { $0[facts.id, default: Record()].updates.append(facts) } }
    func flowClosed(_ facts: FlowFacts) { state.withLock { $0[facts.id, default: Record()].closed = facts } }
    private let exchangeRows = Mutex<[ExchangeRecord]>([])
    func exchangeChanged(_ exchange: ExchangeRecord) { exchangeRows.withLock { $0.append(exchange) } }
    /// Every exchange row as it was told, in order (a row changes several times).
    var exchanges: [ExchangeRecord] { exchangeRows.withLock { $0 } }

    var closed: [FlowFacts] {
        let ids = order.withLock { $0 }
        return state.withLock { s in ids.compactMap { s[$0]?.closed } }
    }

    /// Waits until `count` flows are closed (the loop reports just after the client sees the end).
    func waitForClosed(_ count: Int, timeout: Double = 10) -> [FlowFacts] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let list = closed
            if list.count >= count { return list }
            usleep(10_000)
        }
        return closed
    }
}

/// A ChunkRecorder that sums what it is given, and answers `wanted` to every chunk.
final class CountingRecorder: ChunkRecorder {
    let on: Bool
    /// Counted chunks stand for kept content (query strings kept in the request rows).
    var keepsContent: Bool { on }
    let wanted: Bool
    /// Whether `flowRecorder(flow:)` gives a flow recorder (counting into `held`).
    let holds: Bool
    let bytes = Atomic<Int>(0)
    let chunks = Atomic<Int>(0)
    /// Times `flowRecorder(flow:)` was asked.
    let flowRecordersAsked = Atomic<Int>(0)
    let held: HeldCounter
    init(on: Bool, wanted: Bool = true, holds: Bool = false) {
        self.on = on
        self.wanted = wanted
        self.holds = holds
        held = HeldCounter(wanted: wanted)
    }
    var isRecording: Bool { on }
    func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes buffer: UnsafeRawBufferPointer) -> Bool {
        bytes.wrappingAdd(buffer.count, ordering: .relaxed)
        chunks.wrappingAdd(1, ordering: .relaxed)
        return wanted
    }
    func flowRecorder(flow: UInt64) -> (any FlowChunkRecorder)? {
        flowRecordersAsked.wrappingAdd(1, ordering: .relaxed)
        return holds ? held : nil
    }

    /// The flow recorder `CountingRecorder` gives: its own counts.
    final class HeldCounter: FlowChunkRecorder {
        let wanted: Bool
        let bytes = Atomic<Int>(0)
        let chunks = Atomic<Int>(0)
        init(wanted: Bool) { self.wanted = wanted }
        func record(direction: Direction, offsetMicros: Int64, bytes buffer: UnsafeRawBufferPointer) -> Bool {
            bytes.wrappingAdd(buffer.count, ordering: .relaxed)
            chunks.wrappingAdd(1, ordering: .relaxed)
            return wanted
        }
    }
}

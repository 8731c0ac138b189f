import Dispatch
@testable import FlowStore
import Foundation
import Synchronization
import Testing

/// The queue hands batches between producers and the writer without a second reference to
/// either storage (i24-deccap): producers always append into storage they own alone, so a
/// batch of arrays is never copied on write nor allocated afresh per batch on the data path.
@Suite struct BoundedWriterQueueStorageTests {
    /// A batch's storage that says when it was shared at a write: the model of an array's
    /// copy-on-write. `@unchecked Sendable`: touched only under the queue's mutex (`add`) or by
    /// the writer thread while it holds the batch (`write`, `removeAll`), and handed between the
    /// two under that mutex.
    final class Storage: @unchecked Sendable {
        var items: [Int] = []
    }

    struct Shares: Sendable, Equatable {
        /// Storages made for an empty batch.
        var made = 0
        /// Adds that found their storage shared (an array would have copied it).
        var shared = 0
    }

    struct Owned: WriterBatch {
        var storage: Storage?

        var count: Int { storage?.items.count ?? 0 }
        var isWorthWritingNow: Bool { false }

        mutating func add(_ offer: Int, refusing: Bool, counters: inout Shares) -> (added: Int, outcome: Bool) {
            if storage == nil {
                storage = Storage()
                counters.made += 1
            } else if !isKnownUniquelyReferenced(&storage) {
                counters.shared += 1
                let copy = Storage()
                copy.items = storage!.items
                storage = copy
            }
            storage!.items.append(offer)
            return (1, true)
        }

        mutating func removeAll() {
            if isKnownUniquelyReferenced(&storage) {
                storage?.items.removeAll(keepingCapacity: true)
            } else if storage != nil {
                storage = Storage()
            }
        }
    }

    /// Notes which storage each batch came in, and its numbers.
    final class Writer: QueueWriter, Sendable {
        let seen = Mutex<[(ObjectIdentifier?, [Int])]>([])

        func tick() {}
        var idleDeadline: DispatchTime? { nil }
        func idleDeadlinePassed() {}
        func write(_ batch: Owned) -> Int {
            seen.withLock { $0.append((batch.storage.map(ObjectIdentifier.init), batch.storage?.items ?? [])) }
            return 0
        }
        func stop() {}
    }

    @Test("six batches: two storages made, taking turns, never shared at an add; every number written once, in order")
    func twoStoragesTakeTurns() throws {
        let queue = BoundedWriterQueue<Writer>(batch: Owned(), counters: Shares(), lingerMillis: 0, lingerAfterWrite: false)
        let writer = Writer()
        try queue.startThread(named: "storage test") { writer }
        for round in 0..<6 {
            // Held back until all three are in: one batch per round.
            queue.pause()
            for n in 0..<3 { _ = queue.enqueue(round * 10 + n) }
            queue.resume()
            queue.flush()
        }
        queue.stop()
        let shares = queue.read { counters, _, _ in counters }
        #expect(shares == Shares(made: 2, shared: 0))
        let seen = writer.seen.withLock { $0 }
        #expect(seen.map(\.1) == (0..<6).map { round in (0..<3).map { round * 10 + $0 } })
        let ids = seen.map(\.0)
        #expect(Set(ids.compactMap { $0 }).count == 2 && ids.allSatisfy { $0 != nil })
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 != $1 } && zip(ids, ids.dropFirst(2)).allSatisfy { $0 == $1 })
    }
}

import FlowStore
import Foundation
import Synchronization
import Tunnel

/// Keeps the names DNS answers gave (the `host_names` table, with TTLs) without making the
/// tunnel's thread wait: answers are queued to one background queue; past `capacity` waiting
/// batches new ones are dropped and counted.
final class HostNameRecorder: Sendable {
    private let hostNames: HostNames
    private let queue = DispatchQueue(label: "tv.host-names")
    private let waiting = Atomic<Int>(0)
    let capacity: Int
    let dropped = Atomic<UInt64>(0)

    init(hostNames: HostNames, capacity: Int = 10_000) {
        self.hostNames = hostNames
        self.capacity = capacity
    }

    /// Queues `answers` seen at `atMicros`; returns at once.
    func record(_ answers: [DNSResolvedAddress], atMicros: Int64) {
        guard waiting.wrappingAdd(1, ordering: .relaxed).newValue <= capacity else {
            waiting.wrappingSubtract(1, ordering: .relaxed)
            dropped.wrappingAdd(1, ordering: .relaxed)
            return
        }
        queue.async { [self] in
            for answer in answers {
                try? self.hostNames.remember(name: answer.name, address: answer.address.description, at: atMicros, ttl: Int64(answer.ttl))
            }
            self.waiting.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    /// The observer to give the tunnel engine.
    var observer: DNSAnswerObserver { { [self] answers, at in self.record(answers, atMicros: at) } }

    /// Waits until every queued answer is written.
    func flush() { queue.sync {} }
}

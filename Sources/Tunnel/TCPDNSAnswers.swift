import Synchronization
import Proxy
import Wire

/// The responses the proxy's relays read from DNS over TCP (`DNSOverTCPReader`, on the worker
/// loops), waiting for the TUN engine to read names from them (`EngineLoop.learnTCPAnswers`), as
/// it does UDP answers on its own thread.
///
/// A relay hands a response on before it writes it to the program, and the engine takes in what
/// waits here before it names any flow (`namesFromDNS`), so a connection made after a TCP answer
/// is named from it (a trial's `dig +tcp` and glibc's TCP retry named nothing). The lock is held
/// for an append or a swap, never across I/O; full, the newest responses are dropped and counted.
public final class TCPDNSAnswers: DNSAnswerSink {
    /// Responses that may wait at once (the engine takes them within a housekeeping tick).
    public static let capacity = 1_024

    private let waiting = Mutex<[TCPDNSAnswer]>([])
    /// How many wait: the engine's check before it takes the lock.
    private let count = Atomic<Int>(0)
    /// Responses taken in, and dropped because `capacity` waited.
    let taken = Atomic<UInt64>(0)
    let dropped = Atomic<UInt64>(0)
    /// What the relays' readers counted as their connections ended (`DNSOverTCPReader.Counts`).
    let strayResponses = Atomic<UInt64>(0)
    let queriesNotTracked = Atomic<UInt64>(0)
    let bytesNotRead = Atomic<UInt64>(0)
    let streamsNotDNS = Atomic<UInt64>(0)

    public init() {}

    /// A relay's responses (a worker loop): appended, or dropped and counted when full.
    public func take(_ answers: [TCPDNSAnswer]) {
        let kept = waiting.withLock { list -> Int in
            let room = max(0, Self.capacity - list.count)
            list.append(contentsOf: answers.prefix(room))
            count.store(list.count, ordering: .releasing)
            return min(room, answers.count)
        }
        taken.wrappingAdd(UInt64(kept), ordering: .relaxed)
        if kept < answers.count { dropped.wrappingAdd(UInt64(answers.count - kept), ordering: .relaxed) }
    }

    public func streamEnded(_ counts: DNSOverTCPReader.Counts) {
        strayResponses.wrappingAdd(counts.strayResponses, ordering: .relaxed)
        queriesNotTracked.wrappingAdd(counts.queriesNotTracked, ordering: .relaxed)
        bytesNotRead.wrappingAdd(counts.bytesNotRead, ordering: .relaxed)
        if counts.gaveUp { streamsNotDNS.wrappingAdd(1, ordering: .relaxed) }
    }

    /// Whether any response waits (one atomic load: the engine asks before each naming).
    var hasWaiting: Bool { count.load(ordering: .acquiring) > 0 }

    /// Everything waiting, in the order it came; the list is left empty.
    func drain() -> [TCPDNSAnswer] {
        waiting.withLock { list in
            count.store(0, ordering: .releasing)
            let taken = list
            list = []
            return taken
        }
    }
}

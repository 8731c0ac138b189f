/// A binary min-heap of (deadline, token): the loop's timers. Entries are never removed early; a
/// handler whose deadline moved simply ignores the stale entry when it fires (lazy deletion), so
/// touching a connection's idle time costs nothing.
struct TimerHeap {
    private var deadlines: [UInt64] = []
    private var tokens: [UInt64] = []

    var isEmpty: Bool { deadlines.isEmpty }
    var count: Int { deadlines.count }
    var nextDeadline: UInt64? { deadlines.first }

    mutating func push(_ deadline: UInt64, _ token: UInt64) {
        deadlines.append(deadline)
        tokens.append(token)
        var i = deadlines.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard deadlines[parent] > deadlines[i] else { break }
            deadlines.swapAt(parent, i)
            tokens.swapAt(parent, i)
            i = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(_ now: UInt64) -> (deadline: UInt64, token: UInt64)? {
        guard let first = deadlines.first, first <= now else { return nil }
        let token = tokens[0]
        let last = deadlines.count - 1
        deadlines.swapAt(0, last)
        tokens.swapAt(0, last)
        deadlines.removeLast()
        tokens.removeLast()
        var i = 0
        let n = deadlines.count
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < n && deadlines[l] < deadlines[m] { m = l }
            if r < n && deadlines[r] < deadlines[m] { m = r }
            if m == i { break }
            deadlines.swapAt(i, m)
            tokens.swapAt(i, m)
            i = m
        }
        return (first, token)
    }

    mutating func removeAll() {
        deadlines.removeAll()
        tokens.removeAll()
    }
}

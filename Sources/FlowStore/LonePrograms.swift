import FlowTerms

/// Programs by flow, oldest first (pure): removing one is O(1), its place left as a gap that
/// taking skips (a flow's record kept after its program moves the program to the flow).
struct LonePrograms: Sendable {
    /// Each flow's program and the stamp of its place in `order`.
    private var programs: [Int64: (stamp: Int, program: FlowProgram)] = [:]
    /// Places, oldest first; a place whose stamp its flow no longer carries is a gap.
    private var order: [(id: Int64, stamp: Int)] = []
    private var nextStamp = 0

    var count: Int { programs.count }

    /// Keeps `program` for flow `id` (a program kept before is replaced and keeps its place).
    mutating func keep(_ program: FlowProgram, of id: Int64) {
        if let kept = programs[id] {
            programs[id] = (kept.stamp, program)
            return
        }
        programs[id] = (nextStamp, program)
        order.append((id, nextStamp))
        nextStamp += 1
    }

    /// Removes flow `id`'s program. - Returns: it, nil when none was kept.
    mutating func remove(_ id: Int64) -> FlowProgram? {
        guard let kept = programs.removeValue(forKey: id) else { return nil }
        // Gaps are dropped once they are most of the order.
        if order.count > 64 && order.count > 2 * programs.count { order.removeAll { programs[$0.id]?.stamp != $0.stamp } }
        return kept.program
    }

    /// Takes the oldest `n` programs (all when fewer).
    mutating func takeFirst(_ n: Int) -> [(Int64, FlowProgram)] {
        var taken: [(Int64, FlowProgram)] = []
        var used = 0
        while taken.count < n, used < order.count {
            let place = order[used]
            used += 1
            guard let kept = programs[place.id], kept.stamp == place.stamp else { continue }
            programs[place.id] = nil
            taken.append((place.id, kept.program))
        }
        order.removeFirst(used)
        return taken
    }

    /// Puts `taken` (from `takeFirst`, none kept since) back in front, in its order.
    mutating func putBack(_ taken: [(Int64, FlowProgram)]) {
        guard !taken.isEmpty else { return }
        let first = nextStamp
        nextStamp += taken.count
        for (offset, (id, program)) in taken.enumerated() { programs[id] = (first + offset, program) }
        order.insert(contentsOf: taken.enumerated().map { ($0.element.0, first + $0.offset) }, at: 0)
    }
}

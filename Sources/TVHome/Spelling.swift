/// "Did you mean …?" for a mistyped word: the known word within a small edit distance.
public enum Spelling {
    /// The word of `candidates` closest to `word` by edit distance (insertions, deletions,
    /// substitutions and swaps of two neighbouring letters, case ignored), when that distance is
    /// at most 2 and at most a third of the longer word, and no other candidate is as close; nil
    /// otherwise. E.g. "sock5" → "socks5", "flws" → "flows", "hra" → "har", "xyz" → nil.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let w = Array(word.lowercased())
        guard !w.isEmpty else { return nil }
        var best: (word: String, distance: Int)?
        var tie = false
        for candidate in candidates {
            let c = Array(candidate.lowercased())
            let d = distance(w, c)
            guard d <= 2, d * 3 <= max(w.count, c.count) else { continue }
            if best == nil || d < best!.distance {
                best = (candidate, d)
                tie = false
            } else if d == best!.distance && candidate != best!.word {
                tie = true
            }
        }
        return tie ? nil : best?.word
    }

    /// Edit distance between two character arrays: Levenshtein's insertions, deletions and
    /// substitutions, plus a swap of two neighbours as one edit (the optimal string alignment
    /// distance, Damerau's restricted form: "hra" to "har" is 1, not 2).
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }

    /// " Did you mean X?" for a sentence's end, or "" when nothing is close.
    public static func suggestion(for word: String, among candidates: [String]) -> String {
        closest(to: word, among: candidates).map { " Did you mean '\($0)'?" } ?? ""
    }
}

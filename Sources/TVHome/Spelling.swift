/// "Did you mean …?" for a mistyped word: the known word within a small edit distance.
public enum Spelling {
    /// The word of `candidates` closest to `word` by Levenshtein distance (insertions, deletions,
    /// substitutions, case ignored), when that distance is at most 2 and at most a third of the
    /// longer word, and no other candidate is as close; nil otherwise. E.g. "sock5" → "socks5",
    /// "flws" → "flows", "xyz" → nil.
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

    /// Levenshtein distance between two character arrays.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// " Did you mean X?" for a sentence's end, or "" when nothing is close.
    public static func suggestion(for word: String, among candidates: [String]) -> String {
        closest(to: word, among: candidates).map { " Did you mean '\($0)'?" } ?? ""
    }
}

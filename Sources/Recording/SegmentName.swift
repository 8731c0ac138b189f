/// How segment files are named in `$TV_HOME/content/`: `content-NNNNNNNN.seg`, NNNNNNNN being a
/// sequence number (decimal, 8 digits, growing; a new writer starts after the highest). A file is
/// made under `content-NNNNNNNN.seg.new` and renamed once locked (see `SegmentAppender`), so a
/// name without `.new` always belongs either to the writer holding its lock or to nobody.
public enum SegmentName {
    /// The file name of segment `sequence`.
    public static func fileName(_ sequence: Int) -> String {
        let digits = String(sequence)
        return "content-" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits + ".seg"
    }

    /// The name a segment has while it is being created.
    public static func newFileName(_ sequence: Int) -> String { fileName(sequence) + ".new" }

    /// The sequence of a segment file name, or nil for any other name.
    public static func sequence(of name: String) -> Int? {
        guard name.hasPrefix("content-"), name.hasSuffix(".seg") else { return nil }
        let digits = name.dropFirst("content-".count).dropLast(".seg".count)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return Int(digits)
    }

    /// The sequence of a `.new` name (a segment being created), or nil.
    public static func newSequence(of name: String) -> Int? {
        guard name.hasSuffix(".new") else { return nil }
        return sequence(of: String(name.dropLast(".new".count)))
    }
}

/// A path's folder and last component, by text, for any path a user types. Foundation's
/// `NSString.deletingLastPathComponent` and `.lastPathComponent` trap on Linux for a path of
/// one character (`tv audit bundle 2 -o a` crashed: a trial); these never trap.
public enum PathText {
    /// The folder part of `path`, as `NSString.deletingLastPathComponent` answers it: "/a/b" →
    /// "/a", "/a" → "/", "a" → "", "a/b/" → "a", "/" → "/", "/tmp//a/b" → "/tmp/a".
    public static func folder(of path: String) -> String {
        let p = trimmed(path)
        guard let slash = p.lastIndex(of: "/") else { return "" }
        let head = p[..<slash]
        guard let kept = head.lastIndex(where: { $0 != "/" }) else { return "/" }
        return String(head[...kept])
    }

    /// The last component of `path`: "/a/b" → "b", "a" → "a", "a/b/" → "b", "/" → "/", "" → "".
    public static func name(of path: String) -> String {
        let p = trimmed(path)
        if p == "/" { return "/" }
        guard let slash = p.lastIndex(of: "/") else { return String(p) }
        return String(p[p.index(after: slash)...])
    }

    /// `path` with each run of slashes made one and without a trailing slash, but "/" kept
    /// (as `NSString` does: "/tmp//a/b" → folder "/tmp/a").
    private static func trimmed(_ path: String) -> Substring {
        var collapsed = ""
        collapsed.reserveCapacity(path.utf8.count)
        for character in path where !(character == "/" && collapsed.last == "/") { collapsed.append(character) }
        guard let last = collapsed.lastIndex(where: { $0 != "/" }) else { return collapsed.isEmpty ? "" : "/" }
        return collapsed[...last]
    }
}

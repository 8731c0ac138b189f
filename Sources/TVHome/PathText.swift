/// A path's folder and last component, by text, for any path a user types. Foundation's
/// `NSString.deletingLastPathComponent` and `.lastPathComponent` trap on Linux for a path of
/// one character (`tv audit bundle 2 -o a` crashed: a trial); these never trap.
public enum PathText {
    /// The folder part of `path`, as `NSString.deletingLastPathComponent` answers it: "/a/b" →
    /// "/a", "/a" → "/", "a" → "", "a/b/" → "a", "/" → "/".
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

    /// `path` without trailing slashes, but "/" kept.
    private static func trimmed(_ path: String) -> Substring {
        guard let last = path.lastIndex(where: { $0 != "/" }) else { return path.isEmpty ? "" : "/" }
        return path[...last]
    }
}

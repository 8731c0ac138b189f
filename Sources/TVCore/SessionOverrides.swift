/// What the running session does against a saved switch (`tv run --inspect`, `--keep-content`
/// hold for that session whatever the settings say), said beside `tv settings` (pure): the CLI
/// listed `inspection.enabled off` and `content.keep off` beside a session inspecting and
/// keeping content, while tv web's Settings said so (a trial).
public enum SessionOverrides {
    /// One line per saved switch the session holds otherwise; none when no session runs.
    /// - Parameters:
    ///   - inspectionSaved: `inspection.enabled` as saved (or its default).
    ///   - contentKeepSaved: `content.keep` as saved (or its default).
    ///   - session: the live session's status values (`inspection`, `contentKeeping`), nil when none runs.
    public static func lines(inspectionSaved: Bool, contentKeepSaved: Bool, session: [String: String]?) -> [String] {
        guard let session else { return [] }
        var lines: [String] = []
        if !inspectionSaved && session["inspection"] == "on" {
            lines.append("inspection.enabled: the running session inspects anyway (started with --inspect); `tv inspect off` stops it.")
        }
        if !contentKeepSaved && session["contentKeeping"] == "on" {
            lines.append("content.keep: the running session keeps content anyway (started with --keep-content); the saved value applies from its next start.")
        }
        return lines
    }
}

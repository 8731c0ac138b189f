/// What `tv export connections` says before and after writing.
public enum ExportConnectionsPresentation {
    /// Before writing (on a terminal): how many, and that no content is inside.
    public static func before(_ s: ConnectionExport.Summary, file: String) -> String {
        "Writing \(counted(s.count)) to \(file)\(s.truncated ? " (the newest; more matched)" : ""): metadata only, no content of any connection is inside."
    }

    /// After writing.
    public static func after(_ s: ConnectionExport.Summary, file: String, format: ConnectionExport.Format) -> String {
        var line = "Wrote \(counted(s.count)) to \(file)"
        if s.truncated { line += "; more matched: these are the newest" + (format == .json ? " (the file says \"truncated\": true)" : "") + ", and --limit N writes more" }
        if s.damaged > 0 { line += "; \(s.damaged) damaged row\(s.damaged == 1 ? " was" : "s were") left out" }
        return line + "."
    }

    static func counted(_ n: Int) -> String { "\(Units.grouped(Int64(n))) connection\(n == 1 ? "" : "s")" }
}

import LocalCA

/// The line a session says, even under `--quiet`, when inspection is saved on but the data
/// folder's CA is in doubt: the session runs, passing TLS through, and the user who asked for
/// inspection learns why it is not happening (seed 002, "doubt closes the door": nothing is
/// generated over the doubtful files, and nothing is inspected with them).
public enum InspectionDoubtNotice {
    /// - Parameter doubt: what `CAFolder.load` found wrong.
    public static func sentence(_ doubt: CADoubt) -> String {
        "Inspection is on in the settings, but the CA is in doubt (\(doubt.path) \(doubt.problem)), so this session passes TLS through without inspecting it; repair or restore that file (`tv ca status` says more)."
    }
}

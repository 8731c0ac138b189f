/// Where a command that reads kept content writes what it is handed: `tv`'s console (standard
/// output for results, standard error for notices), or a recorder in tests.
///
/// The pieces are kept as the reading hands them, because the console guards each piece on its
/// own (`TerminalText.guarded`): the same pieces give the same bytes.
public protocol CommandOutput {
    /// Writes `text` to standard output as it is (no newline added).
    func out(_ text: String)
    /// Writes `text` and a newline to standard output.
    func line(_ text: String)
    /// Writes to standard output each line `produce` hands its `line` function, followed by a
    /// newline, while they are made (the console gathers them up to 64 KiB a write).
    func lines(_ produce: (_ line: (String) -> Void) -> Void)
    /// Writes `text` and a newline to standard error.
    func note(_ text: String)
    /// Writes `data` to standard output byte for byte.
    func bytes(_ data: [UInt8])
    /// Whether standard output is a terminal (raw bytes that could drive it are then refused).
    var stdoutIsTerminal: Bool { get }
}

#if canImport(Glibc)
import Glibc
#endif
import TVHome

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
    /// The errno of the first write to standard output that failed (ENOSPC on a full disk, EIO),
    /// nil while every write went through; a reader that went away (EPIPE) is not a failure.
    var standardOutputFailure: Int32? { get }
}

extension CommandOutput {
    public var standardOutputFailure: Int32? { nil }
}

/// Standard output could not take what a command wrote (`CommandOutput.standardOutputFailure`):
/// the output is incomplete. Said once, by `tv` before it exits, or by a command that would
/// otherwise say it wrote everything (`OutputFile.write`).
public struct StandardOutputWriteError: UserFacingError, Equatable {
    /// The errno write(2) gave.
    public let code: Int32
    public init(code: Int32) { self.code = code }
    public var message: String {
        "Could not write to standard output (\(String(cString: strerror(code)))), so what it received is incomplete; free space where it goes, or write to a file with -o FILE, then try again."
    }
}

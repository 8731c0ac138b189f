/// An error that `tv` says to the user as one sentence: what happened and what to do.
///
/// Every module's error enum conforms, so the command line prints `message` as it is and exits
/// with `exitCode` (1 unless the error says otherwise; 2 is reserved for bad command lines).
public protocol UserFacingError: Error, Sendable {
    /// One sentence: what happened and what to do next.
    var message: String { get }
    /// The process exit code for this error (default 1).
    var exitCode: Int32 { get }
}

extension UserFacingError {
    public var exitCode: Int32 { 1 }
}

import CommandLineParser

/// Which `tv` this is: `tv --version` and `tv version` print `TVVersion.line`; HAR files name
/// `number` as their creator's version.
///
/// The number is a constant in the source, raised by hand at a release. No commit hash is baked
/// in: SwiftPM has no plain way to pass one into a build without a plugin or a generated file,
/// and a stale one would be worse than none.
enum TVVersion {
    /// The release number.
    static let number = "0.1"
    /// `tv 0.1`.
    static let line = "tv \(number)"

    static let spec = CommandSpec(name: "version", summary: "Print tv's version (the same as tv --version).")

    static func run(_ inv: Invocation) throws -> Int32 {
        inv.console.line(line)
        return 0
    }
}

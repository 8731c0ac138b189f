#if canImport(Glibc)
import Glibc
#endif

/// A tv command the user is told to run as root, written so that it reaches this data folder:
/// `sudo` resets HOME and drops TV_HOME, so a bare `sudo tv ca trust --apply --yes` read root's
/// data folder (no CA there; a user who then made one with `sudo tv ca create` trusted a second
/// root system-wide while their own `tv run` signed with the first: a trial).
public enum SudoCommand {
    /// `sudo tv --data-dir DIR WORDS` when this process is not root (DIR quoted for the shell),
    /// `tv WORDS` when it is.
    /// - Parameters:
    ///   - words: the command after `tv`, e.g. `ca trust --apply --yes`.
    ///   - dataDir: the data folder this command ran with.
    public static func line(_ words: String, dataDir: String, euid: uid_t = geteuid()) -> String {
        euid == 0 ? "tv " + words : "sudo tv --data-dir " + ShellWord.quote(dataDir) + " " + words
    }
}

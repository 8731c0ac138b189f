/// A word as a POSIX shell reads it back, for the commands tv suggests (`tv flows … --after`,
/// `tv audit start NAME`): as is when it holds only characters the shell leaves alone, else in
/// single quotes (a `'` inside becomes `'\''`).
public enum ShellWord {
    public static func quote(_ word: String) -> String {
        if !word.isEmpty && word.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%")
}

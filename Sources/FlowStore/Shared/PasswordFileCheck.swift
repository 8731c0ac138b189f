import Foundation

/// Why libpq found no password in the password file it read, when that is the file's doing:
/// the file libpq reads (`passfile=` in the URL, else `PGPASSFILE`, else `~/.pgpass`; PostgreSQL
/// documentation §34.16) is missing, no regular file, or readable by others (libpq then ignores
/// it, "permissions should be u=rw (0600) or less"). A trial's missing and 0644 files were both
/// said only as "tv found none".
enum PasswordFileCheck {
    /// One clause, or nil when the file is there and only you can read it (its lines are then
    /// the matter, which libpq's words say).
    static func trouble(parameters: [(String, String)], environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let path: String
        if let given = parameters.last(where: { $0.0 == "passfile" })?.1, !given.isEmpty {
            path = given
        } else if let variable = environment["PGPASSFILE"], !variable.isEmpty {
            path = variable
        } else if let home = environment["HOME"], !home.isEmpty {
            path = home + "/.pgpass"
        } else {
            return nil
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return "the password file \(path) does not exist" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "the password file \(path) is not a regular file" }
        if info.st_mode & 0o077 != 0 {
            return "libpq ignores the password file \(path) because others can read it (chmod 600 \(path))"
        }
        return nil
    }
}

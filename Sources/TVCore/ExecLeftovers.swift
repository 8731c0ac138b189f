#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What a `tv exec` killed before it could clean up leaves: its audit socket `exec-PID.sock` in
/// the data folder's run directory and its resolv.conf `exec-PID.resolv.conf` there or in
/// `/run/tunnelvision` (`ExecResolvConfFile`), folders only tv writes in. The next `tv exec`
/// removes those whose process is gone (a new-user trial found them still there six sessions
/// after a `kill -9`).
public enum ExecLeftovers {
    /// The names in a folder's listing that belong to an exec whose pid `isAlive` says is gone.
    /// Only `exec-DIGITS.sock` and `exec-DIGITS.resolv.conf` are ever chosen.
    public static func stale(_ names: [String], isAlive: (Int32) -> Bool) -> [String] {
        names.filter { name in
            guard name.hasPrefix("exec-") else { return false }
            let rest = name.dropFirst("exec-".count)
            let digits: Substring
            if rest.hasSuffix(".sock") {
                digits = rest.dropLast(".sock".count)
            } else if rest.hasSuffix(".resolv.conf") {
                digits = rest.dropLast(".resolv.conf".count)
            } else {
                return false
            }
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let pid = Int32(digits), pid > 0 else { return false }
            return !isAlive(pid)
        }
    }

    /// Removes the stale ones from each folder; what cannot be removed stays (best effort).
    public static func sweep(_ folders: [String]) {
        for folder in folders {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in stale(names, isAlive: processExists) { unlink(folder + "/" + name) }
        }
    }

    /// kill(pid, 0): alive unless the kernel says there is no such process (EPERM: another
    /// user's, alive).
    static func processExists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}

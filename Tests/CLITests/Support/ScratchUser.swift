import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Another user on the machine for one test (issue 12 §8/§9): a system account without a home,
/// made with `useradd --system --no-create-home` and removed by `remove()` (call it in a defer).
/// Needs root; tests that use it are enabled only when `ScratchUser.available`.
final class ScratchUser {
    let name: String
    let uid: uid_t
    let gid: gid_t

    /// Root, with useradd, userdel and setpriv on PATH.
    static let available: Bool = geteuid() == 0
        && ["/usr/sbin/useradd", "/usr/sbin/userdel", "/usr/bin/setpriv"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

    init() throws {
        let name = "tvscratch\(UInt32.random(in: 100_000...999_999))"
        // useradd locks /etc/passwd; tests running at once may find it locked for a moment.
        var last: ProcessOutput?
        for _ in 0..<20 {
            let made = try Run.process("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                                       in: "/", environment: Run.environment(home: "/"))
            last = made
            if made.status == 0 { break }
            usleep(100_000)
        }
        guard last?.status == 0, let entry = getpwnam(name) else { throw Failed(output: last) }
        self.name = name
        uid = entry.pointee.pw_uid
        gid = entry.pointee.pw_gid
    }

    /// Deletes the account (and its group).
    func remove() {
        for _ in 0..<20 {
            if (try? Run.process("/usr/sbin/userdel", [name], in: "/", environment: Run.environment(home: "/")))?.status == 0 { return }
            usleep(100_000)
        }
    }

    /// Gives `path` (not followed when a symbolic link) to this user, as if they had made it.
    func own(_ path: String) {
        lchown(path, uid, gid)
    }

    /// The command line that runs `arguments` as this user, without root's groups or capabilities.
    func command(_ arguments: [String]) -> [String] {
        ["/usr/bin/setpriv", "--reuid", String(uid), "--regid", String(gid), "--clear-groups", "--inh-caps=-all"] + arguments
    }

    struct Failed: Error, CustomStringConvertible {
        let output: ProcessOutput?
        var description: String { "useradd failed: \(output.map(\.description) ?? "not run")" }
    }
}

extension Sandbox {
    /// `tv --data-dir <sandbox>/data ARGS…` run as `user`.
    func tv(as user: ScratchUser, _ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        try tvArgs(as: user, arguments, sourceLocation: sourceLocation)
    }

    func tvArgs(as user: ScratchUser, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        let argv = user.command([try TVBinary.require(), "--data-dir", dataDir] + arguments)
        return try Run.process(argv[0], Array(argv.dropFirst()), in: "/", environment: environment, timeout: 30, sourceLocation: sourceLocation)
    }
}

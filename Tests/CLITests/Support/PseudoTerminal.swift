import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A command run with standard input, output and error on one pseudo-terminal (Python's `pty`),
/// as a person at a terminal would run it; shared by CLITests and RunTests (linked in Shared/).
enum PseudoTerminal {
    /// What the terminal showed. `before`: everything up to the first `[y/N] ` question (nil
    /// when none was asked); `existed`: whether the watched path existed when it was asked;
    /// `after`: what came after the answer (the answer's echo first), or everything when no
    /// question came. Lines end in "\n" (the terminal's "\r\n" undone).
    struct Shown: Decodable, CustomStringConvertible {
        let status: Int
        let before: String?
        let existed: Bool?
        let after: String
        var description: String { "status \(status)\n--- before:\n\(before ?? "(no question)")\n--- after:\n\(after)" }
    }

    static let script = """
        import json, os, subprocess, sys
        answer, watch, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
        leader, follower = os.openpty()
        p = subprocess.Popen(cmd, stdin=follower, stdout=follower, stderr=follower, start_new_session=True)
        os.close(follower)
        shown, before, existed = b"", None, None
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
            if before is None and b"[y/N] " in shown:
                before, existed, shown = shown.decode(), os.path.exists(watch), b""
                os.write(leader, answer.encode() + b"\\n")
        status = p.wait(timeout=30)
        undo = lambda s: s.replace("\\r\\n", "\\n")
        print(json.dumps({"status": status, "before": before and undo(before), "existed": existed, "after": undo(shown.decode())}))
        """

    /// Runs `executable ARGUMENTS…` in `folder` on a pseudo-terminal; `answer` is typed at the
    /// first `[y/N] ` question, when `watch`'s existence is noted.
    static func run(_ executable: String, _ arguments: [String], answer: String = "", watch: String = "/nonexistent",
                    in folder: String, environment: [String: String], sourceLocation: SourceLocation = #_sourceLocation) throws -> Shown {
        let path = folder + "/pty-\(UUID().uuidString.prefix(8)).py"
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let run = try Run.process("python3", [path, answer, watch, executable] + arguments, in: folder, environment: environment,
                                  timeout: 60, sourceLocation: sourceLocation)
        #expect(run.status == 0, "\(run)", sourceLocation: sourceLocation)
        return try JSONDecoder().decode(Shown.self, from: run.stdout)
    }
}

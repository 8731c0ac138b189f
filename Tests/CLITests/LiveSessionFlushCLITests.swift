import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A reading command asks a live session to flush first, bounded: a session that accepts but
/// never answers (hung) delays `tv flows` by at most the 1 s answer bound, and it says so.
@Suite("reading commands and a hung session (issue 15)")
struct LiveSessionFlushCLITests {
    @Test("a control socket that accepts and never answers: tv flows, tv flow and tv turns still answer within ~1 s, each saying the rows may lag")
    func hungSessionDoesNotBlockReads() throws {
        try withSandbox { s in
            #expect(try s.tv("ca", "create").status == 0)
            try FileManager.default.createDirectory(atPath: s.dataDir + "/run", withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let socket = s.dataDir + "/run/control.sock"
            // Accepts every connection and reads nothing, answers nothing: a stuck session.
            let hung = try Child("/usr/bin/python3", ["-c", """
                import socket, sys, time
                s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16)
                held = []
                while True:
                    held.append(s.accept()[0])
                """, socket], environment: s.environment)
            defer { hung.stop() }
            for _ in 0..<200 where !FileManager.default.fileExists(atPath: socket) { usleep(10_000) }
            let notice = "The running tv session did not finish writing within 1 s, so the newest flows may be missing or still shown open; run the command again in a moment.\n"
            for arguments in [["flows"], ["flow", "1"], ["turns", "1"]] {
                let started = Date()
                let r = try s.tvArgs(arguments)
                let took = Date().timeIntervalSince(started)
                #expect(took >= 0.9 && took < 5, "\(arguments) took \(took) s")
                #expect(r.err.hasPrefix(notice), "\(arguments): \(r)")
            }
            #expect(try s.tv("flows").out == "No flows are recorded yet. Start a session with `tv run` and point a client at it.\n")
        }
    }
}

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 §9: an unprivileged user's `tv flows` / `tv status` against root's running session
/// name the real cause (the data folder is root's, or cannot be reached) and how to reach it,
/// not "Could not create the data folder (Operation not permitted)" or "No tv session is running".
@Suite("tv run: another user's commands against root's session (issue 12)", .serialized)
struct OtherUserRunTests {
    @Test("a scratch user's tv flows and tv status against root's live session: the folder is root's, run tv as root; nothing changes", .enabled(if: ScratchUser.available))
    func unprivilegedAgainstRootsSession() throws {
        let user = try ScratchUser()
        defer { user.remove() }
        let box = try Sandbox()
        defer { box.remove() }
        let tv = try TVSession(box, ["--quiet"])
        defer { tv.kill() }

        // The folders above the data folder can be entered: the data folder itself is root's.
        chmod(box.root, 0o755)
        let rootsFolder = "tv: The data folder \(box.dataDir) belongs to root, not to you (\(user.name)), and its sessions, flows and CA are root's; run tv as root (sudo tv …) to use it, or pass --data-dir with a folder of your own.\n"
        for command in [["flows"], ["status"], ["status", "--json"], ["stop"]] {
            let result = try box.tvArgs(as: user, command)
            #expect(result.status == 1, "\(result)")
            #expect(result.err == rootsFolder, "\(result)")
            #expect(result.out.isEmpty, "\(result)")
        }

        // A folder on the way is closed to that user.
        chmod(box.root, 0o700)
        let closed = try box.tv(as: user, "flows")
        #expect(closed.status == 1, "\(closed)")
        #expect(closed.err == "tv: The data folder \(box.dataDir) cannot be reached by you (\(user.name)): the folder \(box.root) on the way is closed to you (it belongs to root); run tv as root (sudo tv …) to use it, or pass --data-dir with a folder of your own.\n", "\(closed)")

        // Root's session runs on, its folder as it was.
        #expect(box.mode(box.dataDir) == 0o700)
        #expect(try box.tv("status").status == 0)
        try tv.stop()
        #expect(tv.exitStatus == 0, "\(tv.log())")
    }
}

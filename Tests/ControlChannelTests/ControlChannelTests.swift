import ControlChannel
import TVHome
import Foundation
import Testing

@Suite struct ControlChannelTests {
    func tempSocketPath() -> String {
        let dir = NSTemporaryDirectory() + "tvctl-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir + "/control.sock"
    }

    @Test func answersRequestsAndIsPrivate() throws {
        let path = tempSocketPath()
        let server = try ControlServer(path: path) { request in
            ControlResponse(ok: true, message: "got \(request.command)", values: ["n": request.arguments["n"] ?? ""])
        }
        defer { server.stop() }
        var st = stat()
        #expect(stat(path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
        let response = try ControlClient(path: path).send(ControlRequest(command: "status", arguments: ["n": "7"]))
        #expect(response == ControlResponse(ok: true, message: "got status", values: ["n": "7"]))
    }

    @Test func secondServerOnALiveSocketIsRefused() throws {
        let path = tempSocketPath()
        let server = try ControlServer(path: path) { _ in ControlResponse(ok: true, message: "") }
        defer { server.stop() }
        #expect(throws: ControlError.alreadyRunning(path: path)) {
            _ = try ControlServer(path: path) { _ in ControlResponse(ok: true, message: "") }
        }
    }

    @Test func staleSocketIsReplacedAndStopRemovesIt() throws {
        let path = tempSocketPath()
        // A stale socket file: bound once, its server gone.
        let first = try ControlServer(path: path) { _ in ControlResponse(ok: true, message: "first") }
        first.stop()
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        let server = try ControlServer(path: path) { _ in ControlResponse(ok: true, message: "second") }
        #expect(try ControlClient(path: path).send(ControlRequest(command: "x")).message == "second")
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(throws: ControlError.notRunning) { _ = try ControlClient(path: path) }
    }

    @Test("a folder at the socket path: refused by name (not 'Address already in use'), and the folder is left alone")
    func folderAtTheSocketPath() throws {
        let path = tempSocketPath()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(throws: ControlError.occupiedByFolder(path: path)) {
            _ = try ControlServer(path: path) { _ in ControlResponse(ok: true, message: "") }
        }
        #expect(throws: ControlError.occupiedByFolder(path: path)) { try ControlServer.refuseIfLive(path: path) }
        var isDir: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue)
        #expect(ControlError.occupiedByFolder(path: "/d/run/control.sock").message
                == "A folder stands where the control socket /d/run/control.sock goes, so no session can be reached there; check what is in it, remove it (`rmdir /d/run/control.sock`) and run tv again.")
    }

    @Test("connect refused with EACCES or EPERM is another user's session (named from the socket's owner); other failures are no session")
    func connectFailures() throws {
        let path = tempSocketPath()
        let server = try ControlServer(path: path) { _ in ControlResponse(ok: true, message: "") }
        defer { server.stop() }
        let owner = FileOwner.named(geteuid())
        #expect(ControlError.connectFailed(path: path, errno: EACCES) == .otherUser(path: path, owner: owner))
        #expect(ControlError.connectFailed(path: path, errno: EPERM) == .otherUser(path: path, owner: owner))
        #expect(ControlError.connectFailed(path: path + ".gone", errno: EACCES) == .otherUser(path: path + ".gone", owner: nil))
        #expect(ControlError.connectFailed(path: path, errno: ECONNREFUSED) == .notRunning)
        #expect(ControlError.connectFailed(path: path, errno: ENOENT) == .notRunning)
        #expect(ControlError.otherUser(path: "/d/run/control.sock", owner: FileOwner(id: 0, name: "root")).message
                == "A tv session for this data folder runs as root, and its control socket /d/run/control.sock is closed to you; run tv as root (sudo tv …) to reach it.")
        #expect(ControlError.otherUser(path: "/d/run/control.sock", owner: nil).message
                == "A tv session for this data folder runs as another user, and its control socket /d/run/control.sock is closed to you; run tv as the user who started it (e.g. with sudo) to reach it.")
    }
}

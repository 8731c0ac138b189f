import ControlChannel
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
}

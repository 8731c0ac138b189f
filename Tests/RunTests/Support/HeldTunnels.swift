import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Two CONNECT tunnels through `tv` to a Python echo server, each sending `ping N\n` (7 bytes up)
/// and then held open: the open connections a kill -9 leaves behind (`CrashRecoveryRunTests`,
/// `SharedStoreRunTests`). The clients and the server are killed by `stop` (and when released).
final class HeldTunnels {
    let echo: PythonServer
    let holders: [Background]

    /// Starts the echo server and the two clients through the proxy on `proxyPort`.
    init(_ box: Sandbox, proxyPort: UInt16) throws {
        echo = try PythonServer(echoServer)
        let script = box.work + "/hold.py"
        try Data(tunnelClient.utf8).write(to: URL(fileURLWithPath: script))
        holders = try (0..<2).map { [echo] i in
            try Background(["python3", script, String(proxyPort), "127.0.0.1:\(echo.port)", "hold", "ping \(i)\n"], logPath: box.root + "/hold\(i).log")
        }
    }

    /// Reads `rows` until it holds both flows with their 7 bytes up (at most 10 s); the last rows read.
    func waitUntilBothCarried(_ rows: () throws -> [JSON]) throws -> [JSON] {
        var read: [JSON] = []
        for _ in 0..<400 {
            read = try rows()
            if read.count == 2 && read.allSatisfy({ $0.int("bytesUp") == 7 }) { break }
            usleep(25_000)
        }
        return read
    }

    /// Kills the two clients (the echo server stays until `stop`).
    func releaseClients() { holders.forEach { $0.stop() } }

    /// Kills the clients and the echo server.
    func stop() {
        releaseClients()
        echo.stop()
    }
}

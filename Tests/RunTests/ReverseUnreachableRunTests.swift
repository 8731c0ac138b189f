import Foundation
import Testing

/// Reverse mode in front of a server that is not there (a development server not started yet).
@Suite("tv run --mode reverse: a target tv cannot reach", .serialized)
struct ReverseUnreachableRunTests {
    @Test("reverse:https to a port nobody listens on: a TLS client (curl with tv's root) gets tv's 502 saying why, not a bare close (it read SSL_ERROR_SYSCALL: a trial), its row reading 502 by tv; a plain client the same 502 as before")
    func tlsClientGetsTheReason() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let closed = freeLoopbackPort()
        let tv = try world.run("--inspect", "--mode", "reverse:https://127.0.0.1:\(closed)")
        let reason = "tv could not connect to 127.0.0.1:\(closed) (connection refused)"
        let tls = try box.curl(["-sS", "--cacert", world.tvRoot, "-w", "\n%{http_code}", "https://localhost:\(tv.port)/app"])
        #expect(tls.status == 0 && tls.out == reason + "\n\n502", "\(tls)")
        let plain = try box.curl(["-sS", "-w", "\n%{http_code}", "http://localhost:\(tv.port)/plain"])
        #expect(plain.status == 0 && plain.out == reason + "\n\n502", "\(plain)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        #expect(rows.contains { $0.string("path") == "/app" && $0.int("status") == 502 && $0.string("state") == "answered" }, "\(rows)")
        let flows = try box.json("flows")["flows"] as? [JSON] ?? []
        #expect(flows.count == 2 && flows.allSatisfy { $0.string("status") == "failed" && $0.string("failureReason") == reason }, "\(flows)")
    }
}

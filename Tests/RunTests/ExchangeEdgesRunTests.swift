import Foundation
import Testing

/// Issue 16's edges through the real `tv` binary (found by the walkthrough).
@Suite("tv run: HTTP exchange rows at their edges (issue 16)", .serialized)
struct ExchangeEdgesRunTests {
    @Test("a 502 tv answers itself (the server refused) is a row answered by tv, with its status and reason, not a cut request")
    func tvAnswered502() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        let closedPort = freeLoopbackPort()
        let r = try box.curl(["-x", tv.proxyURL, "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(closedPort)/gone"])
        #expect(r.out == "502", "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        #expect(rows.count == 1)
        #expect(rows.first?.string("state") == "answered")
        #expect(rows.first?.int("status") == 502)
        #expect(rows.first?.string("reason") == "Bad Gateway")
        #expect(rows.first?.string("path") == "/gone")
        let listed = try box.tv("requests").out
        #expect(listed.contains("502 by tv"), "\(listed)")
        #expect(!listed.contains("cut"), "\(listed)")
        let id = rows.first?.int("id") ?? 0
        let detail = try box.tv("request", String(id)).out
        #expect(detail.contains("status 502 Bad Gateway — answered by tv, not the server"), "\(detail)")
        // `~e` (failed) finds it; `~q` (no response of the server's) too.
        #expect((try box.json("requests", "--filter", "~e")["requests"] as? [JSON] ?? []).count == 1)
        #expect((try box.json("requests", "--filter", "~q")["requests"] as? [JSON] ?? []).count == 1)
    }
}

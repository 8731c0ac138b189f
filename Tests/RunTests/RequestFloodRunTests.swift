import Foundation
import Testing

/// More requests on one HTTP/2 connection than a browser ever makes: h2load (nghttp2's real
/// client) sends 12,000 on one connection through `tv run --mode reverse:https://…` to nginx.
/// The connection writes its first 10,000 rows and then 10 a second (`RequestRowAllowance`); the
/// rest are counted on the flow, `tv flow` shows the first 50 and both counts, and `tv export
/// har` writes the rows there are (a trial's rapid reset made 200,000 rows in 20 s, every one
/// printed by `tv flow`, 78 MB of HAR).
@Suite("tv run: one HTTP/2 connection's requests past its row allowance", .serialized)
struct RequestFloodRunTests {
    @Test("12,000 requests from h2load on one connection: rows up to the allowance, the rest counted on the flow and said by tv flow")
    func h2loadPastTheAllowance() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--mode", "reverse:https://localhost:\(world.nginx.tlsPort)")
        let started = Date()
        let load = try box.tool("h2load", ["-n", "12000", "-c", "1", "-m", "50", "https://localhost:\(tv.port)/index.html"], timeout: 600)
        let seconds = Int(Date().timeIntervalSince(started).rounded(.up))
        #expect(load.out.contains("12000 succeeded"), "\(load)")
        let flows = try box.closedFlows(1, timeout: 60)
        let id = try #require(flows.first?.int("id"))

        let detail = try box.tv("flow", String(id), "--json")
        let flow = try #require(try JSONSerialization.jsonObject(with: detail.stdout) as? JSON, "\(detail)")
        let rows = try #require(flow.int("requestCount"), "\(detail)")
        let leftOut = try #require(flow.int("requestsLeftOut"), "\(detail)")
        #expect((flow["requests"] as? [JSON])?.count == 50)
        #expect(rows + leftOut == 12_000)
        #expect(rows >= 10_000 && rows <= 10_000 + 10 * seconds, "\(rows) rows in \(seconds) s")

        let text = try box.tv("flow", String(id)).out
        #expect(text.contains("\nHTTP requests (the first 50 of \(grouped(rows)); `tv requests --flow \(id)` lists them all; `tv request ID` shows one):\n"),
                "\(text.prefix(3_000))")
        #expect(text.contains("\n  … \(grouped(rows - 50)) more\n"))
        #expect(text.contains("\n  \(grouped(leftOut)) more requests were read on this connection and counted, not written:"
                              + " tv writes a connection's first 10,000 requests, then 10 a second"), "\(text.suffix(2_000))")
        #expect(text.components(separatedBy: "\n").filter { $0.contains("  GET  /index.html  200") }.count == 50)

        let harPath = box.work + "/flood.har"
        let har = try box.tv("export", "har", String(id), "-o", harPath)
        #expect(har.status == 0, "\(har)")
        let check = try box.python("""
        import json, sys
        print(len(json.load(open(sys.argv[1]))["log"]["entries"]))
        """, [harPath])
        #expect(check.out == "\(rows)\n", "\(check)")
        try tv.stop()
    }
}

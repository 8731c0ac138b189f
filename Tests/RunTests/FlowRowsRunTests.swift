import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 15, "Flow rows that mislead", through the real `tv` binary: what `tv flows`, `tv flow`
/// and `tv status` say right after real clients (curl, openssl s_client) went through `tv run`.
@Suite("tv run: flow rows say what happened, at once (issue 15)", .serialized)
struct FlowRowsRunTests {
    @Test("a ClientHello offering only TLS 1.1 (openssl s_client -tls1_1 at SECLEVEL=0): passed through, and the list says 'not inspected' with the reason")
    func belowMinimumVersion() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let legacy = ["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"]
        let server = try OpenSSLServer(cert: world.pki.serverCert, key: world.pki.serverKey, extra: legacy)
        defer { server.stop() }
        let s = try box.tool("openssl", ["s_client", "-proxy", tv.proxyHostPort, "-connect", "localhost:\(server.port)",
                                         "-servername", "localhost", "-CAfile", world.pki.upstreamCA] + legacy, stdin: Data())
        #expect(s.out.contains("Protocol  : TLSv1.1") || s.out.contains("Protocol: TLSv1.1"), "\(s)")
        let rows = try box.closedFlows(1)
        try #require(rows.count == 1)
        let reason = "the client offers only TLSv1.1, below tv's minimum TLSv1.2; passed through"
        #expect(rows[0].string("status") == "encrypted")
        #expect(rows[0].string("failureReason") == reason)
        #expect(rows[0].string("clientTLSVersion") == "TLSv1.1" && rows[0].string("serverTLSVersion") == "TLSv1.1")
        let id = try #require(rows[0].int("id"))
        let list = try box.tv("flows").out.split(separator: "\n").map(String.init)
        #expect(list.count == 2 && list[1].trimmingCharacters(in: .whitespaces).hasPrefix("\(id)  ") && list[1].contains("  TLSv1.1 :\(server.port)  ")
                && list[1].hasSuffix("  not inspected: " + reason), "\(list)")
        let detail = try box.tv("flow", String(id)).out
        #expect(detail.contains("  status       encrypted — passed through untouched, not inspected: \(reason)\n"), "\(detail)")
        try tv.stop()
    }

    @Test("right after curl through tv run, one `tv flows --json` shows the flow closed with its bytes (the session flushed when asked); tv flow and tv status agree")
    func readingFlushesTheSession() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        for _ in 0..<3 {
            let r = try world.curlThrough(tv, [world.url("/index.html")])
            #expect(r.out == "hello from nginx\n", "\(r)")
        }
        // No waiting, no polling: one read, right after the last client exited.
        let rows = try box.flowRows()
        #expect(rows.count == 3, "\(rows)")
        for row in rows {
            #expect(!(row["duration"] is NSNull) && row["duration"] != nil, "\(row)")
            #expect(row.string("status") == "inspected" && (row.int("bytesUp") ?? 0) > 0 && (row.int("bytesDown") ?? 0) > 0, "\(row)")
        }
        // tv status --json: keys a program can use; the closed counts nested by status.
        let status = try #require(try box.status())
        func keys(_ object: JSON) -> [String] {
            object.flatMap { key, value in [key] + ((value as? JSON).map(keys) ?? []) }
        }
        let bad = keys(status).filter { key in key.contains(" ") || key.contains(".") || key.contains("_") }
        #expect(bad.isEmpty, "\(bad)")
        #expect(status.object("closed")?.int("inspected") == 3, "\(status)")
        #expect(status.object("closed")?.int("keptPrivate") == 0 && status.object("closed")?.int("notEncrypted") == 0, "\(status)")
        #expect(status.int("pinningDetections") == 0 && status["pinnedHostsRemembered"] == nil, "\(status)")
        #expect(status.object("recording")?.int("flowsNotSaved") == 0, "\(status)")

        // A filter that matches nothing names itself and the total, not "start a session".
        let none = try box.tv("flows", "--host", "18080")
        #expect(none.status == 0 && none.out == "No flows match --host 18080; 3 flows are recorded in all.\n", "\(none)")
        let two = try box.tv("flows", "--host", "18080", "--status", "failed")
        #expect(two.out == "No flows match --host 18080 --status failed; 3 flows are recorded in all.\n", "\(two)")
        try tv.stop()
    }
}

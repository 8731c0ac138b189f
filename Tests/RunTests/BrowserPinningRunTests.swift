import Foundation
import Testing

/// Headless Chromium through `tv run --inspect` (Browser/chromium_through_tv.py), trusting tv's
/// root. A new-user trial's `tv diag` said "13 of 20 TLS connections offered were inspected … 7
/// possible pinning": each of the 7 a spare connection Chromium opened beside the one it used and
/// closed unused, 0.3 ms after its handshake when the other won the race (as fast as curl
/// --pinnedpubkey closes), or after idling. They are no sign of pinning, and no error; a client
/// that checks a pin still is one.
@Suite("tv run: Chromium's spare connections are not pinning", .serialized)
struct BrowserPinningRunTests {
    @Test func chromiumsSpareConnectionsAreUnusedNotPinning() throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver", "/usr/bin/certutil"] where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) is missing: Scripts/packages.sh installs chromium, chromium-driver and libnss3-tools")
            return
        }
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        defer { tv.kill() }
        let home = box.root + "/chromium-home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/chromium_through_tv.py").path
        let loaded = try box.tool("/usr/bin/python3", [script, tv.proxyURL, world.tvRoot, world.url("/index.html"), "3", home], timeout: 180)
        #expect(loaded.status == 0 && loaded.out.contains("loaded 3: hello from nginx"), "\(loaded.all)")
        _ = try box.waitForNoOpenConnections()
        let page = try box.flowRows().filter { $0.string("host") == "localhost" && $0.int("serverPort").map(String.init) == "\(world.nginx.tlsPort)" }
        // The connections that carried the page, and the spares beside them (Chromium opened one
        // at every load in 10 of 10 tries on this machine).
        let used = page.filter { ($0.int("bytesUp") ?? 0) > 0 }
        let spares = page.filter { $0.int("bytesUp") == 0 }
        #expect(used.count >= 3, "\(page)")
        try #require(!spares.isEmpty, "no spare connection was opened: \(page)")
        for spare in spares {
            #expect(spare.string("status") == "inspected", "\(spare)")
            #expect(spare["error"] is NSNull, "\(spare)")
            let id = try #require(spare.int("id"))
            let shown = try box.tv("flow", String(id))
            #expect(shown.out.contains("  status       inspected — tv terminated TLS on both legs; the client sent nothing over it and closed it: "
                                       + "a connection it did not use (a browser opens spare connections and closes those it does not need)\n"), "\(shown)")
        }
        #expect(try box.status()?.int("possiblePinning") == 0)
        #expect(try PinningRunTests.pinned(box).isEmpty)
        // A client that checks a pin is still one: curl --pinnedpubkey with a pin no key has.
        let pinned = try world.curlThrough(tv, ["--pinnedpubkey", "sha256//" + String(repeating: "A", count: 43) + "=", world.url("/index.html")])
        #expect(pinned.status == 90, "\(pinned)")
        _ = try box.waitForNoOpenConnections()
        let last = try #require(try box.flowRows().first { $0.string("host") == "localhost" && $0.int("bytesUp") == 0 && !($0["error"] is NSNull) })
        #expect(last.string("error") == "the client closed right after the handshake without sending data (possible pinning); its next connection to localhost:\(world.nginx.tlsPort) passes through unread")
        #expect(try box.status()?.int("possiblePinning") == 1)
    }
}

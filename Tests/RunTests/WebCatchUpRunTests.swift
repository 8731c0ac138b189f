import Foundation
import Testing

/// `tv run --web` in headless Chromium (Browser/web_catchup.py), from a new-user trial that drove
/// Chromium through tv: a Requests or Timeline tab hidden while traffic ran came back saying
/// "● Live" above old rows until a reload; the conversation view showed `\x0d` at the end of each
/// CRLF line; the Flow Inspector said "First to last packet" with other times than `tv flow`.
@Suite("tv web: live screens catch up, and read as the CLI does", .serialized)
struct WebCatchUpRunTests {
    @Test func hiddenScreensCatchUpInHeadlessChromium() throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) is missing: Scripts/packages.sh installs chromium and chromium-driver")
            return
        }
        let world = try RunWorld()
        let box = world.sandbox
        let session = try world.run("--inspect", "--keep-content", "--web", "--web-listen", "127.0.0.1:0")
        defer { session.kill() }
        let web = try WebRunTests().served(session)
        // A first HTTP/1.1 exchange, so both lists have a top row; its flow's conversation and
        // inspector are read after.
        #expect(try world.curlThrough(session, ["-o", "/dev/null", "--http1.1", world.url("/index.html")]).status == 0)
        let flow = try #require(try box.closedFlows(1).first?["id"] as? Int)
        let shown = try box.tv("flow", String(flow))
        let active = try #require(shown.out.split(separator: "\n").first { $0.hasPrefix("  active       ") }, "\(shown)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/web_catchup.py").path
        let result = try box.tool("/usr/bin/python3", [script, web.base + "/?token=" + web.token, session.proxyURL, world.tvRoot,
                                                       world.url("/index.html"), "\(flow):" + active.dropFirst("  active       ".count)],
                                  timeout: 180)
        #expect(result.status == 0, "\(result.all)")
        for check in ["requests caught up after its tab was hidden", "timeline caught up after its tab was hidden",
                      "the conversation shows CRLF line ends as tv turns does", "the inspector says Active with tv flow's times",
                      "no console errors"] {
            #expect(result.out.contains("ok: " + check), "\(result.all)")
        }
    }
}

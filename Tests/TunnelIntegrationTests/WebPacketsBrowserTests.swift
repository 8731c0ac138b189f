import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tv web`'s packet list and packet detail over real TUN packets (issue 24): three `tv exec`
/// sessions fetch from the lab's nginx, each into a capture file of its own, so that three of
/// the missing-bytes reasons happen for real: the first file deleted (its packets' bytes are
/// gone), the second written with a snap length of 200 (the data packets cut), the third over a
/// TUN with a 9,000-byte MTU (data packets over the display's 2 KB cap). Then `tv web` alone over
/// the data folder, driven in headless Chromium (RunTests/Browser/web_packets.py). The fourth
/// reason, bytes that are not IP, cannot come from a TUN; PacketDetailPresentation's tests show it.
@Suite("tv web shows TUN packets (headless Chromium)", .serialized,
       .enabled(if: LabRequirements.met && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
                    && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
                "needs root, /dev/net/tun, nginx, dnsmasq, chromium and chromium-driver"))
final class WebPacketsBrowserTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    func json(_ arguments: [String]) throws -> Any {
        let r = lab.tv(arguments)
        guard r.status == 0, let data = r.out.data(using: .utf8) else { throw LabError("tv \(arguments): \(r)") }
        return try JSONSerialization.jsonObject(with: data)
    }

    /// The newest flow to the lab's nginx.
    func newestWebFlow() throws -> Int {
        try #require(try lab.flows().first { $0["serverPort"] as? Int == 8080 }?["id"] as? Int)
    }

    /// The packets of `flow` as `tv packets FLOW --json` lists them.
    func packets(_ flow: Int) throws -> [[String: Any]] {
        let list = try #require(try json(["packets", String(flow), "--json"]) as? [String: Any])
        return list["packets"] as? [[String: Any]] ?? []
    }

    @Test("the inspector lists each flow's packets as tv packets does; a packet's detail draws its headers and bytes, or says why it cannot")
    func packetsInTheBrowser() throws {
        let fetch = ["curl", "-sS", "-o", "/dev/null", "http://10.203.0.2:8080/1m.bin"]
        // 1: a small fetch, whose capture file is then deleted.
        #expect(lab.exec([], ["curl", "-sS", "-o", "/dev/null", "http://10.203.0.2:8080/index.html"]).status == 0)
        let gone = try newestWebFlow()
        // 2: packets cut at 200 bytes.
        #expect(lab.tv(["settings", "set", "capture.snaplen", "200"]).status == 0)
        #expect(lab.exec([], fetch).status == 0)
        let cut = try newestWebFlow()
        // 3: whole packets larger than the display's cap.
        #expect(lab.tv(["settings", "set", "capture.snaplen", "65535"]).status == 0)
        #expect(lab.exec(["--mtu", "9000"], fetch).status == 0)
        let large = try newestWebFlow()
        let files = try #require(try json(["captures", "--json"]) as? [[String: Any]])
        #expect(files.count == 3, "\(files)")
        #expect(lab.tv(["captures", "delete", "1", "--yes"]).status == 0)

        // The packet each detail opens: the opening of the deleted one, the largest data packet of the others.
        func largestData(_ flow: Int) throws -> Int {
            let rows = try packets(flow).filter { $0["meaning"] as? String == "data" }
            return try #require(rows.max { ($0["size"] as? Int ?? 0) < ($1["size"] as? Int ?? 0) }?["n"] as? Int)
        }
        let cutPacket = try largestData(cut)
        let largePacket = try largestData(large)
        let largeSize = try #require(try packets(large).first { $0["n"] as? Int == largePacket }?["size"] as? Int)
        #expect(largeSize > 2_048, "the 9000-byte MTU gave no packet over 2 KB")

        // A fourth session still running, so one capture is being written while the browser looks.
        let running = try Daemon(["ip", "netns", "exec", lab.host, "unshare", "-m", "sh", "-c",
                                  "mount --bind \"$1\" /etc/resolv.conf && mount --bind \"$2\" /etc/hosts && shift 2 && exec \"$@\"",
                                  "sh", lab.dir + "/resolv.conf", lab.dir + "/hosts",
                                  TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--quiet", "--", "sleep", "120"],
                                 log: lab.dir + "/running.out")
        defer { running.stop(signal: SIGTERM) }
        var recording: Int?
        let waitForFile = Date().addingTimeInterval(15)
        while Date() < waitForFile, recording == nil {
            let files = (try? json(["captures", "--json"]) as? [[String: Any]]) ?? []
            recording = files.first { $0["recording"] as? Bool == true }?["seq"] as? Int
            usleep(100_000)
        }
        let seq = try #require(recording, "the running tv exec opened no capture file")

        let log = lab.dir + "/web.out"
        let web = try Daemon([TVBinary.path!, "--data-dir", lab.dataDir, "web", "--listen", "127.0.0.1:0"], log: log)
        defer { web.stop(signal: SIGTERM) }
        var url = ""
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !url.contains("/?token=") {
            url = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").first { $0.hasPrefix("http://") }.map(String.init) ?? ""
            usleep(50_000)
        }
        #expect(url.contains("/?token="), "tv web printed no URL")
        let folder = (ProcessInfo.processInfo.environment["TV_TEST_OUTPUT"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/test-output").path) + "/web-screens"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("RunTests/Browser/web_packets.py").path
        let cases = "deleted=\(gone):1:absence,snaplen=\(cut):\(cutPacket):snapLengthCut,large=\(large):\(largePacket):displayCap,whole=\(large):1:none"
        let result = Sh.run(["/usr/bin/python3", script, url, folder, cases, String(seq)], timeout: 180)
        #expect(result.status == 0, "\(result)")
        for check in ["deleted: flow \(gone)'s packets listed, packet 1's detail says absence at 1280x800",
                      "snaplen: flow \(cut)'s packets listed, packet \(cutPacket)'s detail says snapLengthCut at 390x844",
                      "large: flow \(large)'s packets listed, packet \(largePacket)'s detail says displayCap at 1280x800",
                      "whole: flow \(large)'s packets listed, packet 1's detail says none at 390x844",
                      "the capture being written is marked Recording", "no console errors"] {
            #expect(result.out.contains("ok: " + check), "\(result)")
        }
    }
}

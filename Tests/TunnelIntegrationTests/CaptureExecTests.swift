import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Packet capture through the real `tv exec`: the pcapng files tv writes read by tshark and
/// capinfos, tv's packet count per flow against tshark's, and a file left by a `tv` killed with
/// SIGKILL mid-write.
@Suite("tv exec captures packets (pcapng, tshark, capinfos)", .serialized,
       .enabled(if: LabRequirements.met && FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"), "needs root, /dev/net/tun, nginx, dnsmasq, tshark"))
final class CaptureExecTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    var captureFolder: String { lab.dataDir + "/captures" }

    func json(_ arguments: [String]) throws -> Any {
        let r = lab.tv(arguments)
        guard r.status == 0, let data = r.out.data(using: .utf8) else { throw LabError("tv \(arguments): \(r)") }
        return try JSONSerialization.jsonObject(with: data)
    }

    /// tshark's count of the packets matching `filter` in every capture file.
    func tsharkCount(_ filter: String) -> Int {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: captureFolder)) ?? []).filter { $0.hasSuffix(".pcapng") }.sorted()
        return files.reduce(0) { total, name in
            let r = Sh.run(["tshark", "-r", captureFolder + "/" + name, "-Y", filter, "-T", "fields", "-e", "frame.number"])
            return total + r.out.split(separator: "\n").count
        }
    }

    @Test("HTTP over IPv4 and IPv6 and UDP: every file opens in capinfos; per flow, tshark counts exactly tv's packets; the list starts opened, accepted and has finished sending")
    func countsMatchTshark() throws {
        let udp = try lab.script("udp3.py", """
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5); s.connect(("10.203.0.2", 7007))
            for n in (10, 200, 1000):
                s.send(b"x" * n); assert s.recv(2000) == b"x" * n
            print("ok")
            """)
        let r = lab.exec([], ["sh", "-c", "curl -sS 'http://10.203.0.2:8080/index.html?[1-400]' > /dev/null && curl -sS -g -o /dev/null http://[fd03::2]:8080/index.html && python3 \(udp)"])
        #expect(r.status == 0, "\(r)")
        let files = try #require(try json(["captures", "--json"]) as? [[String: Any]])
        #expect(files.count == 1)
        #expect(files.first?["recording"] as? Bool == false)
        for file in files {
            let path = try #require(file["path"] as? String)
            let info = Sh.run(["capinfos", "-c", "-M", path])
            #expect(info.status == 0, "\(info)")
            // The interface is named (Wireshark showed "unknown") and the file says what wrote it.
            let named = Sh.run(["capinfos", path])
            #expect(named.out.contains("Name = tv0") && named.out.contains("Capture application: TunnelVision (tv)"), "\(named)")
            var st = stat()
            #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        }
        let flows = try lab.flows()
        let web = flows.filter { $0["serverPort"] as? Int == 8080 }
        #expect(web.count == 2)
        for flow in web {
            let id = try #require(flow["id"] as? Int)
            let port = try #require(flow["clientPort"] as? Int)
            let server = try #require(flow["serverAddress"] as? String)
            let list = try #require(try json(["packets", String(id), "--json"]) as? [String: Any])
            let count = try #require(list["count"] as? Int)
            let packets = try #require(list["packets"] as? [[String: Any]])
            let family = server.contains(":") ? "ipv6" : "ip"
            #expect(count > 5)
            #expect(count == tsharkCount("tcp.port == \(port) && \(family).addr == \(server)"), "flow \(id)")
            #expect(packets.count == min(count, 500))
            #expect(list["capped"] as? Bool == (count > 500))
            #expect(packets.first?["meaning"] as? String == "opened")
            #expect(packets.first?["direction"] as? String == "client_to_server")
            // The client's SYN may be sent again before the answer (a retransmission under load):
            // the first packet that is not an opening is the acceptance.
            #expect(packets.first { $0["meaning"] as? String != "opened" }?["meaning"] as? String == "accepted", "\(packets.prefix(4))")
            #expect(packets.contains { $0["meaning"] as? String == "finished_sending" } || count > 500)
        }
        // 400 requests on one connection are more than 500 packets: capped, both numbers said.
        let big = try #require(web.first { $0["serverAddress"] as? String == "10.203.0.2" })
        let text = lab.tv(["packets", String(big["id"] as! Int)])
        #expect(text.out.contains("the first 500 of "), "\(text)")
        let udpFlow = try #require(flows.first { $0["transport"] as? String == "udp" && $0["serverPort"] as? Int == 7007 })
        let udpList = try #require(try json(["packets", String(udpFlow["id"] as! Int), "--json"]) as? [String: Any])
        #expect(udpList["count"] as? Int == 6)
        #expect(tsharkCount("udp.port == 7007") == 6)
        let detail = lab.tv(["flow", String(udpFlow["id"] as! Int)])
        #expect(detail.out.contains("Packets: 6 captured:"), "\(detail)")
    }

    @Test("a refused connect: the program's SYN is opened, tv's RST+ACK is cut off (RST outranks ACK), both under the failed flow's id; tshark agrees")
    func refusedIsCutOff() throws {
        let r = lab.exec([], ["curl", "-sS", "http://10.203.0.2:9/"])
        #expect(r.status != 0)
        let flow = try #require(try lab.flows().first { $0["serverPort"] as? Int == 9 })
        #expect(flow["status"] as? String == "failed")
        let list = try #require(try json(["packets", String(flow["id"] as! Int), "--json"]) as? [String: Any])
        let packets = try #require(list["packets"] as? [[String: Any]])
        #expect(packets.compactMap { $0["meaning"] as? String } == ["opened", "cut_off"], "\(packets)")
        #expect(packets.last?["tcpFlags"] as? [String] == ["RST", "ACK"])
        #expect(packets.last?["direction"] as? String == "server_to_client")
        let port = try #require(flow["clientPort"] as? Int)
        #expect(tsharkCount("tcp.port == \(port) && tcp.flags.reset == 1 && tcp.flags.ack == 1") == 1)
        let text = lab.tv(["packets", String(flow["id"] as! Int)])
        #expect(text.out.contains("cut off") && text.out.contains("RST, ACK"), "\(text)")
    }

    @Test("a connect still going when the command exits: its flow is recorded (failed: still connecting when the command ended) with its SYNs; the next session's flow gets a new id and none of them")
    func connectingAtExit() throws {
        // 10.203.0.77 is in the origin's subnet and answers nothing: the host's connect waits for ARP.
        let client = try lab.script("giveup.py", """
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(1.5)
            try:
                s.connect(("10.203.0.77", 8080)); print("connected")
            except OSError as e:
                print("gave up")
            """)
        let r = lab.exec([], ["python3", client])
        #expect(r.status == 0 && r.out == "gave up\n", "\(r)")
        let stopped = try #require(try lab.flows().first { $0["serverAddress"] as? String == "10.203.0.77" }, "no flow for the connect")
        #expect(stopped["status"] as? String == "failed")
        #expect(stopped["failureReason"] as? String == "still connecting when the command ended")
        let id = try #require(stopped["id"] as? Int)
        let list = try #require(try json(["packets", String(id), "--json"]) as? [String: Any])
        let packets = try #require(list["packets"] as? [[String: Any]])
        #expect(!packets.isEmpty && packets.allSatisfy { $0["meaning"] as? String == "opened" }, "\(packets)")
        // The next session: a new id, and its flow lists only its own packets.
        let next = lab.exec([], ["curl", "-sS", "-o", "/dev/null", "http://10.203.0.2:8080/index.html"])
        #expect(next.status == 0, "\(next)")
        let web = try #require(try lab.flows().first { $0["serverPort"] as? Int == 8080 && $0["serverAddress"] as? String == "10.203.0.2" })
        #expect(try #require(web["id"] as? Int) > id)
        let webList = try #require(try json(["packets", String(web["id"] as! Int), "--json"]) as? [String: Any])
        let webPackets = try #require(webList["packets"] as? [[String: Any]])
        #expect(webPackets.first?["meaning"] as? String == "opened" && webPackets.dropFirst().first?["meaning"] as? String == "accepted", "\(webPackets.prefix(3))")
    }

    @Test("the closing lines count what the command sent and received, each packet once: tshark's count of each direction in the file")
    func directionCounts() throws {
        let r = lab.tv(["exec", "--yes", "--", "curl", "-sS", "-o", "/dev/null", "http://10.203.0.2:8080/1m.bin"])
        #expect(r.status == 0, "\(r)")
        let line = try #require(r.err.split(separator: "\n").first { $0.hasPrefix("tv: tunnel: programs sent ") }, "\(r.err)")
        let numbers = line.split(whereSeparator: { !$0.isNumber && $0 != "," }).map { $0.replacingOccurrences(of: ",", with: "") }.filter { !$0.isEmpty }
        // "tv: tunnel: programs sent N packets (X) and received M packets (Y)": N and M are the counts.
        let sent = try #require(Int(numbers[0])), received = try #require(Int(line.components(separatedBy: "received ")[1].split(separator: " ")[0].replacingOccurrences(of: ",", with: "")))
        #expect(sent == tsharkCount("frame.packet_flags_direction == 2"), "\(line)")
        #expect(received == tsharkCount("frame.packet_flags_direction == 1"), "\(line)")
        #expect(sent > 0 && received > 0, "\(line)")
    }

    @Test("a DNS query through the tunnel's DNS address: its flow has the query and the answer, as tshark sees them")
    func dnsQuery() throws {
        let r = lab.exec([], ["getent", "ahostsv4", "named.test"])
        #expect(r.status == 0, "\(r)")
        let flow = try #require(try lab.flows().first { $0["transport"] as? String == "udp" && $0["serverPort"] as? Int == 53 })
        let list = try #require(try json(["packets", String(flow["id"] as! Int), "--json"]) as? [String: Any])
        let packets = try #require(list["packets"] as? [[String: Any]])
        #expect(packets.compactMap { $0["direction"] as? String } == ["client_to_server", "server_to_client"], "\(packets)")
        #expect(packets.allSatisfy { $0["meaning"] as? String == "data" && $0["tcpFlags"] is NSNull })
        let port = try #require(flow["clientPort"] as? Int)
        #expect(tsharkCount("udp.port == \(port) && dns.qry.name == \"named.test\"") == 2)
    }

    @Test("capture.enabled off: no file; a flow of the session says no packets were captured; tv captures says how files are made")
    func off() throws {
        #expect(lab.tv(["settings", "set", "capture.enabled", "off"]).status == 0)
        let r = lab.exec([], ["curl", "-sS", "-o", "/dev/null", "http://10.203.0.2:8080/index.html"])
        #expect(r.status == 0, "\(r)")
        let list = lab.tv(["captures"])
        #expect(list.out.contains("There are no capture files yet") && list.out.contains("(it is off"), "\(list)")
        let flow = try #require(try lab.flows().first)
        let packets = lab.tv(["packets", String(flow["id"] as! Int)])
        #expect(packets.out.hasPrefix("No packets of flow "), "\(packets)")
    }

    @Test("tv captures rotate reaches a running tv exec (its file was listed Recording and rotate said no session ran); the closing line names both files")
    func rotateDuringExec() throws {
        let marker = lab.dir + "/rotated"
        let script = "curl -s -o /dev/null http://10.203.0.2:8080/index.html; while [ ! -e \(marker) ]; do sleep 0.1; done; "
            + "curl -s -o /dev/null http://10.203.0.2:8080/index.html"
        let daemon = try Daemon(["ip", "netns", "exec", lab.host, "unshare", "-m", "sh", "-c",
                                 "mount --bind \"$1\" /etc/resolv.conf && mount --bind \"$2\" /etc/hosts && shift 2 && exec \"$@\"",
                                 "sh", lab.dir + "/resolv.conf", lab.dir + "/hosts",
                                 TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--", "timeout", "60", "sh", "-c", script],
                                log: lab.dir + "/rotate.out")
        defer { daemon.stop() }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, (try? lab.flows().first { $0["serverPort"] as? Int == 8080 }) == nil { usleep(50_000) }
        let rotated = lab.tv(["captures", "rotate"])
        #expect(rotated.status == 0 && rotated.out == "Closed capture 1; capture 2 is being recorded now.\n", "\(rotated)")
        // The running exec is the session tv status, diag and top read; tv stop says how it ends.
        let status = lab.tv(["status"])
        #expect(status.status == 0 && status.out.hasPrefix("tv is running (pid ") && status.out.contains("tv exec of timeout 60 sh -c"), "\(status)")
        #expect(status.out.contains("  tunnel: programs sent "), "\(status)")
        #expect(lab.tv(["diag"]).status == 0)
        let top = lab.tv(["top", "--once", "--json"])
        #expect(top.status == 0 && top.out.contains("\"live\""), "\(top)")
        let stop = lab.tv(["stop"])
        #expect(stop.status == 3 && stop.err.contains("; a tv exec is (pid "), "\(stop)")
        FileManager.default.createFile(atPath: marker, contents: nil)
        #expect(daemon.wait(timeout: 30) == 0, "\(daemon.output)")
        #expect(daemon.output.contains("tv: its packets are in 2 files in \(captureFolder), capture-000001.pcapng to capture-000002.pcapng"), "\(daemon.output)")
        // Each file reads whole in capinfos.
        for seq in 1...2 {
            let info = Sh.run(["capinfos", "-c", "-M", captureFolder + "/capture-00000\(seq).pcapng"])
            #expect(info.status == 0, "\(info)")
        }
    }

    @Test("tv killed with SIGKILL mid-write: the file it left opens in capinfos and tshark; the next session closes its row (not Recording), cut to whole blocks")
    func killedMidWrite() throws {
        let loop = "for i in $(seq 1 400); do curl -s -o /dev/null http://10.203.0.2:8080/1m.bin || exit 0; done"
        let daemon = try Daemon(["ip", "netns", "exec", lab.host, "unshare", "-m", "sh", "-c",
                                 "mount --bind \"$1\" /etc/resolv.conf && mount --bind \"$2\" /etc/hosts && shift 2 && exec \"$@\"",
                                 "sh", lab.dir + "/resolv.conf", lab.dir + "/hosts",
                                 TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--quiet", "--", "timeout", "30", "sh", "-c", loop],
                                log: lab.dir + "/killed.out")
        let path = captureFolder + "/capture-000001.pcapng"
        let deadline = Date().addingTimeInterval(20)
        var size = 0
        while Date() < deadline {
            size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
            if size > 4 << 20 { break }
            usleep(20_000)
        }
        #expect(size > 4 << 20, "\(daemon.output)")
        daemon.stop(signal: SIGKILL)
        // Blocks are written whole, but SIGKILL can stop a write(2) part of the way (the kernel
        // checks for a fatal signal between pages), so the last block may be cut: every packet
        // before it reads, and the tools say only that the file was cut short in a packet. The
        // next session cuts the file back to whole blocks (below), after which it reads cleanly.
        let info = Sh.run(["capinfos", "-c", "-M", path])
        #expect(info.status == 0 || info.err.contains("appears to have been cut short in the middle of a packet"), "\(info)")
        let read = Sh.run(["tshark", "-r", path, "-T", "fields", "-e", "frame.number"])
        // 4 MiB in 64 KiB GSO super-packets and their ACKs: dozens of packets, every one readable.
        #expect((read.status == 0 || read.err.contains("cut short in the middle of a packet"))
                && read.out.split(separator: "\n").count > 60, "\(read.err)")
        // The next session closes what the dead one left: not Recording, its size the file's.
        #expect(lab.exec([], ["true"]).status == 0)
        let files = try #require(try json(["captures", "--json"]) as? [[String: Any]])
        let first = try #require(files.first { $0["seq"] as? Int == 1 })
        #expect(first["recording"] as? Bool == false && first["endedMicros"] as? Int != nil)
        let onDisk = (try FileManager.default.attributesOfItem(atPath: path))[.size] as? Int
        #expect(first["bytes"] as? Int == onDisk)
        #expect(Sh.run(["capinfos", "-c", "-M", path]).status == 0)
        // Rows made for packets the killed writer still held (its held-back tail, a batch being
        // written) point past the file's end: `tv packet` says they never reached it, not that
        // the file was damaged after tv wrote it (a trial). Whether the kill left any is chance.
        for flow in try lab.flows(limit: 500).compactMap({ $0["id"] as? Int }) {
            let listed = try #require(try json(["packets", String(flow), "--json"]) as? [String: Any])
            let rows = (listed["packets"] as? [[String: Any]] ?? []).filter { $0["capture"] as? Int == 1 }
            for row in rows where (row["fileOffset"] as? Int ?? 0) >= (onDisk ?? 0) {
                let shown = lab.tv(["packet", String(flow), String(row["n"] as? Int ?? 0)])
                #expect(shown.out.contains("never reached capture-000001.pcapng: the session writing it ended (killed, or crashed)") && !(shown.out + shown.err).contains("damaged"), "\(shown)")
            }
        }
    }
    @Test("--mode tun: tv status says the capture; tv captures rotate through the control socket closes the file; the Recording one cannot be deleted, a closed one can (said first)")
    func tunRotateAndDelete() throws {
        try Sh.must(["ip", "-n", lab.host, "route", "add", "default", "via", "10.203.0.2"])
        let none = lab.tv(["captures", "rotate"])
        #expect(none.status == 3 && none.err.contains("No tv session is running for"), "\(none)")
        let tv = try Daemon(["ip", "netns", "exec", lab.host, TVBinary.path!, "--data-dir", lab.dataDir, "run", "--mode", "tun", "--yes"],
                            log: lab.dir + "/tv-tun.log")
        defer { tv.stop(signal: SIGTERM) }
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline && !tv.output.contains("tv is running") { usleep(50_000) }
        let get = lab.inHost(["curl", "-sS", "http://10.205.0.2:8080/index.html"])
        #expect(get.status == 0 && get.out == OriginLab.indexBody, "\(get)\n\(tv.output)")
        let status = lab.tv(["status"])
        #expect(status.out.contains("\n  capture           capture 1 recording ("), "\(status)")
        let rotated = lab.tv(["captures", "rotate"])
        #expect(rotated.status == 0 && rotated.out == "Closed capture 1; capture 2 is being recorded now.\n", "\(rotated)")
        // The new file's own count, beside the session's (it read the session's as the file's: a trial).
        let after = lab.tv(["status"])
        #expect(after.out.contains("\n  capture           capture 2 recording (0 packets in it), ") && after.out.contains(" packets written this session"),
                "\(after)")
        let list = lab.tv(["captures"])
        #expect(list.out.contains("capture-000002.pcapng") && list.out.contains("Recording"), "\(list)")
        #expect(Sh.run(["capinfos", "-c", "-M", captureFolder + "/capture-000001.pcapng"]).status == 0)
        let refused = lab.tv(["captures", "delete", "2", "--yes"])
        #expect(refused.status != 0 && refused.err.contains("Capture 2 is being recorded and cannot be deleted; run `tv captures rotate` to close it first"), "\(refused)")
        let deleted = lab.tv(["captures", "delete", "1", "--yes"])
        #expect(deleted.status == 0, "\(deleted)")
        #expect(deleted.err.contains("the connections recorded while it was written stay in your history; only the raw packet bytes go"), "\(deleted)")
        #expect(deleted.out.hasPrefix("Deleted capture-000001.pcapng; "), "\(deleted)")
        #expect(!FileManager.default.fileExists(atPath: captureFolder + "/capture-000001.pcapng"))
        let again = lab.tv(["captures", "delete", "1", "--yes"])
        #expect(again.err.contains("There is no capture 1; `tv captures` lists the ones that exist."), "\(again)")
        // The connection stays, and so do its packet rows.
        let flow = try #require(try lab.flows().first { $0["serverPort"] as? Int == 8080 })
        let packets = lab.tv(["packets", String(flow["id"] as! Int)])
        #expect(packets.out.hasPrefix("Packets of flow "), "\(packets)")
    }
}

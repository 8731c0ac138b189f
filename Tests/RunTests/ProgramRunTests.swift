import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18, "The program behind a connection", through the real `tv` binary: a real curl run as
/// another user through the explicit proxy; the row names it (pid, executable, user).
@Suite("tv run: the program behind each connection (issue 18)", .serialized)
struct ProgramRunTests {
    @Test("curl through the explicit proxy as a scratch user: the flow names curl, its pid, /usr/bin/curl and that user; --program curl finds it, --program wget does not; tv flow says it", .enabled(if: ScratchUser.available))
    func curlAsScratchUser() throws {
        let user = try ScratchUser()
        defer { user.remove() }
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        // `exec` keeps the shell's pid: the pid printed is curl's. Two requests a second apart on one
        // connection (`--rate`): a curl that lives a moment, as most programs do; one that exits
        // within milliseconds may finish before tv looks, and is then "not known" (below).
        let url = world.url("/index.html")
        let command = user.command(["/bin/sh", "-c", "echo $$; exec curl -sS -k --rate 1/s -x \(tv.proxyURL) \(url) \(url)"])
        let r = try box.tool(command[0], Array(command.dropFirst()))
        let lines = r.out.split(separator: "\n").map(String.init)
        try #require(r.status == 0 && lines.count == 3 && lines[1] == "hello from nginx" && lines[2] == "hello from nginx", "\(r)")
        let pid = try #require(Int(lines[0]))

        let rows = try box.closedFlows(1)
        try #require(rows.count == 1)
        let program = try #require(rows[0]["program"] as? [String: Any], "\(rows[0])")
        #expect(program["known"] as? Bool == true && program["pid"] as? Int == pid && program["command"] as? String == "curl", "\(program)")
        #expect(program["executable"] as? String == "/usr/bin/curl" && program["uid"] as? Int == Int(user.uid)
                && program["user"] as? String == user.name, "\(program)")
        let id = try #require(rows[0].int("id"))

        let list = try box.tv("flows", "--program", "curl").out.split(separator: "\n").map(String.init)
        #expect(list.count == 2 && list[0].hasPrefix("ID  WHEN  ") && list[0].contains("  PROGRAM  HOST") && list[1].contains("  curl  "), "\(list)")
        let none = try box.tv("flows", "--program", "wget")
        #expect(none.out == "No flows match --program wget; 1 flow is recorded in all.\n", "\(none)")
        // The export takes the same filter (it had none: a trial).
        let curlRows = try box.tv("export", "connections", "-o", "-", "--program", "curl")
        let exported = try #require(try JSONSerialization.jsonObject(with: Data(curlRows.out.utf8)) as? [String: Any])
        #expect(exported["count"] as? Int == 1 && (exported["connections"] as? [[String: Any]])?.first?["programCommand"] as? String == "curl",
                "\(curlRows)")
        let wgetRows = try box.tv("export", "connections", "-o", "-", "--program", "wget")
        #expect((try JSONSerialization.jsonObject(with: Data(wgetRows.out.utf8)) as? [String: Any])?["count"] as? Int == 0, "\(wgetRows)")
        let detail = try box.tv("flow", String(id)).out
        #expect(detail.contains("\n  program      curl (pid \(pid), /usr/bin/curl, user \(user.name) (uid \(user.uid)))\n"), "\(detail)")
        let status = try #require(try box.status())
        #expect(status.object("programs")?.int("found") == 1 && status.object("programs")?.int("dropped") == 0, "\(status)")
        // curl's socket is the peer of tv's listener (127.0.0.1): asked by its four-tuple, no dump.
        #expect(status.object("programs")?.int("exact") == 1 && status.object("programs")?.int("dumps") == 0, "\(status)")
        let human = try box.tv("status").out
        #expect(human.contains("\n  programs          1 looked up: 1 named, 0 not known\n"), "\(human)")
        try tv.stop()
    }

    @Test("a client that connects and exits at once: its flow names it rightly (pid and python3) or says not known, never another program")
    func instantExit() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        let host = tv.proxyHostPort.split(separator: ":")
        var pids: [Int] = []
        for _ in 0..<5 {
            let r = try box.tool("python3", ["-c", "import os, socket; s = socket.create_connection(('\(host[0])', \(host[1]))); print(os.getpid())"])
            pids.append(try #require(Int(r.out.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r)"))
        }
        var rows = try box.closedFlows(5)
        // The lookup's answer is written after the row closes; on a loaded machine it can come
        // after the rows are first read (a full suite beside a build read `program: null`).
        for _ in 0..<100 where !rows.allSatisfy({ $0["program"] is [String: Any] }) {
            usleep(100_000)
            rows = try box.closedFlows(5)
        }
        try #require(rows.count == 5)
        for (row, pid) in zip(rows, pids) {
            let program = try #require(row["program"] as? [String: Any], "\(row)")
            if program["known"] as? Bool == true {
                #expect(program["pid"] as? Int == pid && program["command"] as? String == "python3", "\(program) for pid \(pid)")
            } else {
                #expect(["socket_gone", "process_gone"].contains(program["reason"] as? String ?? ""), "\(program)")
            }
        }
        try tv.stop()
    }
}

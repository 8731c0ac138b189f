import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18, "The program behind a connection", under `tv exec`: the lookup asks the command's
/// own namespace, so the programs it runs (and their children) are named.
@Suite("tv exec: the program behind each flow (issue 18)", .serialized, .enabled(if: LabRequirements.met, "needs root, /dev/net/tun, nginx, dnsmasq"))
final class ExecProgramTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    @Test("tv exec -- sh -c 'python3 …': the TCP flow and the UDP flow name python3 (a child of the command) with its pid, executable and root; tv flows --program python3 lists both")
    func python3InTheNamespace() throws {
        let script = try lab.script("who.py", """
            import os, socket, time
            t = socket.create_connection(("10.203.0.2", 8080))
            t.sendall(b"GET /index.html HTTP/1.1\\r\\nHost: origin.test\\r\\nConnection: close\\r\\n\\r\\n")
            while t.recv(65536): pass
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(5)
            u.sendto(b"hello", ("10.203.0.2", 7007)); u.recvfrom(100)
            time.sleep(1)                        # a program that keeps its sockets a moment (a loaded machine may look late)
            print(os.getpid(), os.readlink("/proc/self/exe"))
            """)
        let r = lab.exec([], ["sh", "-c", "python3 \(script); true"])
        let printed = r.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        try #require(printed.count == 2, "\(r)")
        let pid = try #require(Int(printed[0]), "\(r)")
        let executable = printed[1]
        let flows = try lab.flows().filter { $0["serverAddress"] as? String == "10.203.0.2" }
        #expect(flows.count == 2, "\(flows)")
        for f in flows {
            let program = try #require(f["program"] as? [String: Any], "\(f)")
            #expect(program["known"] as? Bool == true && program["pid"] as? Int == pid && program["command"] as? String == "python3"
                    && program["executable"] as? String == executable && program["uid"] as? Int == 0
                    && program["user"] as? String == "root", "\(f["transport"] ?? "") \(program)")
        }
        let list = lab.tv(["flows", "--program", "python3"]).out.split(separator: "\n")
        #expect(list.count == 3 && list.dropFirst().allSatisfy { $0.contains("  python3  ") }, "\(list)")
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Two network namespaces the tests make and remove: a stand-in host (`10.203.0.1`, `fd03::1`)
/// where `tv` runs, and an origin (`10.203.0.2`, `fd03::2`, addresses that exist only there)
/// running nginx (TLS with h2 and HTTP/1.1 on 443, plain HTTP on 8080, certificates from a test
/// CA), a UDP echo on 7007 and dnsmasq on 53 (`named.test`, and `other.test` for the same IPv4 address). The host stand-in's view of
/// /etc/resolv.conf (the origin's dnsmasq) and /etc/hosts (`origin.test`) are bind-mounted in a
/// private mount namespace for each command; the real host's files are never touched.
final class OriginLab: @unchecked Sendable {
    // `@unchecked Sendable`: every field is set in init; `daemons` is only touched in init and close.
    let tag: String
    /// What the namespaces' names start with (`TV_LAB_NETNS_PREFIX`, else "tv"); a test's own
    /// namespaces start with it too.
    let prefix: String
    let host: String
    let origin: String
    let dir: String
    let upstreamCA: String
    let dataDir: String
    var tvRoot: String { dataDir + "/ca/root.pem" }
    private var daemons: [Daemon] = []
    static let indexBody = "hello from the origin\n"

    init() throws {
        tag = String(UUID().uuidString.prefix(6)).lowercased()
        // `TV_LAB_NETNS_PREFIX` names them apart where several checkouts share a machine.
        prefix = ProcessInfo.processInfo.environment["TV_LAB_NETNS_PREFIX"] ?? "tv"
        host = "\(prefix)h-\(tag)"
        origin = "\(prefix)o-\(tag)"
        dir = NSTemporaryDirectory() + "tvlab-\(tag)"
        upstreamCA = dir + "/up-ca.pem"
        dataDir = dir + "/data"
        try FileManager.default.createDirectory(atPath: dir + "/www", withIntermediateDirectories: true)
        do {
            try setUp()
        } catch {
            close()
            throw error
        }
    }

    private func setUp() throws {
        try Sh.must(["ip", "netns", "add", host])
        try Sh.must(["ip", "netns", "add", origin])
        try Sh.must(["ip", "link", "add", "h-\(tag)", "netns", host, "type", "veth", "peer", "name", "o-\(tag)", "netns", origin])
        try Sh.must(["ip", "-n", host, "addr", "add", "10.203.0.1/24", "dev", "h-\(tag)"])
        try Sh.must(["ip", "-n", host, "addr", "add", "fd03::1/64", "dev", "h-\(tag)", "nodad"])
        try Sh.must(["ip", "-n", origin, "addr", "add", "10.203.0.2/24", "dev", "o-\(tag)"])
        try Sh.must(["ip", "-n", origin, "addr", "add", "fd03::2/64", "dev", "o-\(tag)", "nodad"])
        // Addresses only reachable through a gateway (not a connected route), for `--mode tun`.
        try Sh.must(["ip", "-n", origin, "addr", "add", "10.205.0.2/32", "dev", "lo"])
        try Sh.must(["ip", "-n", origin, "addr", "add", "fd05::2/128", "dev", "lo"])
        for (ns, dev) in [(host, "h-\(tag)"), (origin, "o-\(tag)")] {
            try Sh.must(["ip", "-n", ns, "link", "set", "lo", "up"])
            try Sh.must(["ip", "-n", ns, "link", "set", dev, "up"])
        }
        try "nameserver 10.203.0.2\noptions timeout:2 attempts:2\n".write(toFile: dir + "/resolv.conf", atomically: true, encoding: .utf8)
        try "127.0.0.1 localhost\n::1 localhost\n10.203.0.2 origin.test\nfd03::2 origin6.test\n".write(toFile: dir + "/hosts", atomically: true, encoding: .utf8)

        // Certificates: a test CA the proxy trusts with --upstream-ca, the origin's leaf.
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try Sh.must(["openssl", "req", "-x509"] + ec + ["-keyout", dir + "/up-ca.key", "-out", upstreamCA, "-subj", "/CN=Lab Upstream CA",
                     "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
        try Sh.must(["openssl", "req"] + ec + ["-keyout", dir + "/origin.key", "-subj", "/CN=origin.test", "-days", "2",
                     "-addext", "subjectAltName=DNS:origin.test,DNS:named.test,DNS:origin6.test,IP:10.203.0.2,IP:fd03::2",
                     "-addext", "basicConstraints=CA:FALSE", "-addext", "extendedKeyUsage=serverAuth",
                     "-CA", upstreamCA, "-CAkey", dir + "/up-ca.key", "-out", dir + "/origin.pem"])
        try OriginLab.indexBody.write(toFile: dir + "/www/index.html", atomically: true, encoding: .utf8)
        try Sh.must(["openssl", "rand", "-out", dir + "/www/1m.bin", "1048576"])
        for sub in ["logs", "tmp"] { try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
        let conf = """
            daemon off; master_process off; worker_processes 1; error_log \(dir)/logs/error.log warn; pid \(dir)/nginx.pid;
            events { worker_connections 4096; }
            http {
                access_log off; client_body_temp_path \(dir)/tmp; proxy_temp_path \(dir)/tmp; fastcgi_temp_path \(dir)/tmp;
                uwsgi_temp_path \(dir)/tmp; scgi_temp_path \(dir)/tmp; keepalive_requests 100000;
                server { listen 443 ssl http2; listen [::]:443 ssl http2; ssl_certificate \(dir)/origin.pem; ssl_certificate_key \(dir)/origin.key;
                         ssl_protocols TLSv1.2 TLSv1.3; root \(dir)/www; }
                server { listen 8080; listen [::]:8080; root \(dir)/www; }
            }
            """
        try conf.write(toFile: dir + "/nginx.conf", atomically: true, encoding: .utf8)
        daemons.append(try Daemon(["ip", "netns", "exec", origin, "nginx", "-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/logs/error.log"], log: dir + "/logs/nginx.out"))
        // One socket per address: a reply leaves from the address the datagram came to (a
        // connected client socket, with or without tv, ignores replies from any other).
        let echo = """
            import socket, threading
            def serve(fam, addr):
                s = socket.socket(fam, socket.SOCK_DGRAM)
                s.bind((addr, 7007))
                while True:
                    d, peer = s.recvfrom(65535); s.sendto(d, peer)
            for fam, addr in ((socket.AF_INET6, "fd03::2"), (socket.AF_INET6, "fd05::2"), (socket.AF_INET, "10.205.0.2")):
                threading.Thread(target=serve, args=(fam, addr), daemon=True).start()
            serve(socket.AF_INET, "10.203.0.2")
            """
        try echo.write(toFile: dir + "/echo.py", atomically: true, encoding: .utf8)
        daemons.append(try Daemon(["ip", "netns", "exec", origin, "python3", dir + "/echo.py"], log: dir + "/logs/echo.out"))
        daemons.append(try Daemon(["ip", "netns", "exec", origin, "dnsmasq", "--no-daemon", "--no-resolv", "--no-hosts", "--bind-interfaces",
                                   "--listen-address=10.203.0.2", "--listen-address=10.205.0.2", "--host-record=named.test,10.203.0.2,fd03::2", "--host-record=other.test,10.203.0.2", "--local-ttl=120",
                                   "--pid-file=", "--user=root"], log: dir + "/logs/dnsmasq.out"))
        // Ready: nginx answers on both ports, dnsmasq answers, the UDP echo has its four sockets
        // (a loaded run's first datagram reached the origin before the echo had bound: a test
        // without tv timed out).
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Sh.run(["ip", "netns", "exec", host, "curl", "-s", "-o", "/dev/null", "http://10.203.0.2:8080/"], timeout: 5).status == 0 { break }
            usleep(50_000)
        }
        func echoSockets() -> Int {
            Sh.run(["ip", "netns", "exec", origin, "ss", "-ulnH", "sport", "= :7007"]).out.split(separator: "\n").count
        }
        while Date() < deadline && echoSockets() < 4 { usleep(50_000) }
        guard echoSockets() == 4 else { throw LabError("the origin's UDP echo did not bind its four sockets within 10 s") }
        try Sh.must(["ip", "netns", "exec", host, "curl", "-s", "-o", "/dev/null", "http://10.203.0.2:8080/"])
        try Sh.must(["ip", "netns", "exec", host, "curl", "-s", "-o", "/dev/null", "--cacert", upstreamCA, "--resolve", "origin.test:443:10.203.0.2", "https://origin.test/"])
        try Sh.must([TVBinary.path!, "--data-dir", dataDir, "ca", "create"])
    }

    /// Runs `arguments` in the host stand-in with the lab's resolv.conf and hosts in place.
    func inHost(_ arguments: [String], timeout: Double = 90, stdin: String? = nil) -> Output {
        let script = "mount --bind \"$1\" /etc/resolv.conf && mount --bind \"$2\" /etc/hosts && shift 2 && exec \"$@\""
        return Sh.run(["ip", "netns", "exec", host, "unshare", "-m", "sh", "-c", script, "sh", dir + "/resolv.conf", dir + "/hosts"] + arguments,
                      timeout: timeout, stdin: stdin)
    }

    /// `tv --data-dir DATA ARGS…` in the host stand-in.
    func tv(_ arguments: [String], timeout: Double = 90, stdin: String? = nil) -> Output {
        inHost([TVBinary.path!, "--data-dir", dataDir] + arguments, timeout: timeout, stdin: stdin)
    }

    /// `tv exec --yes --quiet OPTIONS -- CMD…` in the host stand-in.
    func exec(_ options: [String], _ command: [String], timeout: Double = 90) -> Output {
        tv(["exec", "--yes", "--quiet"] + options + ["--"] + command, timeout: timeout)
    }

    /// A `tv exec` left running in the host stand-in: its command runs `before`, waits (up to
    /// `waitSeconds`) until the file `gate` exists, then runs `after`; the test makes `gate` when
    /// it has done what needs the exec alive.
    /// It runs as `inHost` runs commands (the lab's resolv.conf and hosts), with `options` before `--`.
    func execHeldOpen(until gate: String, before: String, after: String = "true", options: [String] = [], waitSeconds: Int = 15,
                      log name: String) throws -> Daemon {
        let ticks = waitSeconds * 20
        let mounts = "mount --bind \"$1\" /etc/resolv.conf && mount --bind \"$2\" /etc/hosts && shift 2 && exec \"$@\""
        return try Daemon(["ip", "netns", "exec", host, "unshare", "-m", "sh", "-c", mounts, "sh", dir + "/resolv.conf", dir + "/hosts",
                           TVBinary.path!, "--data-dir", dataDir, "exec", "--yes", "--quiet"] + options + ["--", "sh", "-c",
                           "\(before); i=0; while [ ! -e \(gate) ] && [ $i -lt \(ticks) ]; do sleep 0.05; i=$((i+1)); done; \(after)"],
                          log: dir + "/" + name)
    }

    /// The flows as `tv flows --json` prints them, newest first.
    func flows(limit: Int = 50) throws -> [[String: Any]] {
        let r = Sh.run([TVBinary.path!, "--data-dir", dataDir, "flows", "--json", "--limit", String(limit)])
        guard r.status == 0, let data = r.out.data(using: .utf8),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = object["flows"] as? [[String: Any]] else { throw LabError("tv flows --json: \(r)") }
        return list
    }

    /// Writes a helper script into the lab folder and returns its path.
    func script(_ name: String, _ text: String) throws -> String {
        let path = dir + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Stops every daemon, kills whatever still runs in the namespaces (by pid), deletes them and
    /// the folder. Safe to call twice.
    func close() {
        for daemon in daemons { daemon.stop() }
        daemons.removeAll()
        for ns in [host, origin] {
            for pid in Sh.run(["ip", "netns", "pids", ns]).out.split(separator: "\n").compactMap({ pid_t($0) }) { kill(pid, SIGKILL) }
            Sh.run(["ip", "netns", "del", ns])
        }
        try? FileManager.default.removeItem(atPath: dir)
    }

    deinit { close() }
}

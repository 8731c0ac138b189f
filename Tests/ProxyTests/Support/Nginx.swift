import Foundation

/// An nginx the tests start: TLS with h2 + http/1.1 via ALPN on one port, plain HTTP on another,
/// serving a folder with a 1 KiB and a 10 MiB file. Killed when the test is done.
final class TestNginx: @unchecked Sendable {
    // `@unchecked Sendable`: immutable after init except the process, which only stop() touches.
    let dir: String
    let tlsPort: UInt16
    let plainPort: UInt16
    let bigFileSHA256: String
    private let background: Background

    /// - Parameters:
    ///   - certificate: the TLS server's certificate (chain) and key files; default `pki`'s server pair.
    ///   - tlsLocations: more directives for the TLS server block (e.g. `location`s the
    ///     content tests add: gzip, a pre-compressed brotli file, a POST answer).
    init(pki: TestPKI = .shared, certificate: (chain: String, key: String)? = nil, tlsLocations: String = "") throws {
        dir = Shell.tempDirectory("nginx")
        let www = dir + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        for sub in ["body", "proxy", "fastcgi", "uwsgi", "scgi", "logs"] {
            try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true)
        }
        var small = [UInt8](repeating: 0, count: 1024)
        for i in small.indices { small[i] = UInt8(truncatingIfNeeded: i &* 31 &+ 7) }
        _ = FileManager.default.createFile(atPath: www + "/1k.bin", contents: Data(small))
        _ = FileManager.default.createFile(atPath: www + "/index.html", contents: Data("hello from nginx\n".utf8))
        Shell.run(["openssl", "rand", "-out", www + "/10m.bin", "10485760"], timeout: 30)
        let hash = Shell.run(["sha256sum", www + "/10m.bin"])
        bigFileSHA256 = String(hash.out.prefix(64))
        tlsPort = Shell.freePort()
        plainPort = Shell.freePort()
        let conf = """
        daemon off;
        master_process off;
        worker_processes 1;
        error_log \(dir)/logs/error.log warn;
        pid \(dir)/nginx.pid;
        events { worker_connections 2048; }
        http {
            access_log off;
            client_body_temp_path \(dir)/body;
            proxy_temp_path \(dir)/proxy;
            fastcgi_temp_path \(dir)/fastcgi;
            uwsgi_temp_path \(dir)/uwsgi;
            scgi_temp_path \(dir)/scgi;
            keepalive_requests 100000;
            server {
                listen 127.0.0.1:\(tlsPort) ssl http2;
                ssl_certificate \(certificate?.chain ?? pki.serverCert);
                ssl_certificate_key \(certificate?.key ?? pki.serverKey);
                ssl_protocols TLSv1.2 TLSv1.3;
                root \(www);
                location /echo { client_max_body_size 50m; dav_methods PUT; }
                \(tlsLocations)
            }
            server {
                listen 127.0.0.1:\(plainPort);
                root \(www);
                client_max_body_size 50m;
                location /upload { dav_methods PUT; create_full_put_path on; }
            }
        }
        """
        try conf.write(toFile: dir + "/nginx.conf", atomically: true, encoding: .utf8)
        background = try Background(["nginx", "-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/logs/error.log"], logPath: dir + "/logs/stdout.log")
        guard Shell.waitForPort(tlsPort), Shell.waitForPort(plainPort) else {
            background.stop()
            throw TestError("nginx did not start: \(background.log) \((try? String(contentsOfFile: dir + "/logs/error.log", encoding: .utf8)) ?? "")")
        }
    }

    func stop() { background.stop() }
    /// Kills nginx and removes its folder (10 MiB of payload each; nothing is left in /tmp).
    deinit {
        background.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

// Real SOCKS5 client bytes: a python3 server on 127.0.0.1 (socks_server.py, see FixtureCapture.swift)
// dumped the greeting, answered 05 00 (no authentication) and dumped the request;
// captured 2026-11-30 on Debian 12 with OpenSSL 3.0.22, curl 7.88.1, Python 3.11.7.

enum CapturedSOCKS5 {
    /// Greeting sent by `curl --socks5-hostname 127.0.0.1:18461 http://a.test/` (methods 00 no-auth, 01 GSSAPI).
    static let curlGreetingHostname: [UInt8] = hex("05020001")

    /// CONNECT request sent by `curl --socks5-hostname 127.0.0.1:18461 http://a.test/`: domain a.test, port 80.
    static let curlRequestHostname: [UInt8] = hex("0501000306612e746573740050")

    /// Greeting sent by `curl --socks5 127.0.0.1:18462 http://127.0.0.1:8080/` (methods 00 no-auth, 01 GSSAPI).
    static let curlGreetingIPv4: [UInt8] = hex("05020001")

    /// CONNECT request sent by `curl --socks5 127.0.0.1:18462 http://127.0.0.1:8080/`: IPv4 127.0.0.1, port 8080.
    static let curlRequestIPv4: [UInt8] = hex("050100017f0000011f90")

    /// Greeting sent by `curl --socks5 127.0.0.1:18463 'http://[::1]:8443/'` (methods 00 no-auth, 01 GSSAPI).
    static let curlGreetingIPv6: [UInt8] = hex("05020001")

    /// CONNECT request sent by `curl --socks5 127.0.0.1:18463 'http://[::1]:8443/'`: IPv6 ::1, port 8443.
    static let curlRequestIPv6: [UInt8] = hex("050100040000000000000000000000000000000120fb")
}

import Proxy
import Testing
@testable import TVCore

/// Which listeners `tv run` warns about (issue 15: `--listen` beyond loopback while inspecting).
@Suite struct ListenExposureTests {
    @Test("loopback is 127/8, ::1 and ::ffff:127.x; the unspecified and other addresses are not")
    func loopback() {
        #expect(["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"].allSatisfy(ListenExposure.isLoopback))
        #expect(!["0.0.0.0", "::", "192.168.1.4", "10.0.0.1", "::ffff:10.0.0.1", "fe80::1", "not-an-address"].contains(where: ListenExposure.isLoopback))
    }

    @Test("the warning: explicit and SOCKS5 modes, beyond loopback, without --proxy-auth; what it adds when inspecting")
    func warning() {
        let any = Endpoint(address: "0.0.0.0", port: 8080)
        #expect(ListenExposure.warning(mode: .regular, listen: any, inspecting: true, authenticated: false)
            == "listening on 0.0.0.0:8080 with inspection on: anyone who can reach that address can use this proxy, also to reach this machine's own 127.0.0.1 services, and read what it decrypts; require a password with --proxy-auth USER:PASSFILE, or listen on 127.0.0.1.")
        #expect(ListenExposure.warning(mode: .socks5, listen: Endpoint(address: "::", port: 1080), inspecting: true, authenticated: false)?
            .hasPrefix("listening on [::]:1080 with inspection on:") == true)
        #expect(ListenExposure.warning(mode: .regular, listen: any, inspecting: true, authenticated: true) == nil)
        #expect(ListenExposure.warning(mode: .regular, listen: any, inspecting: false, authenticated: false)
            == "listening on 0.0.0.0:8080: anyone who can reach that address can use this proxy, also to reach this machine's own 127.0.0.1 services; require a password with --proxy-auth USER:PASSFILE, or listen on 127.0.0.1.")
        #expect(ListenExposure.warning(mode: .regular, listen: Endpoint(address: "127.0.0.1", port: 8080), inspecting: true, authenticated: false) == nil)
        #expect(ListenExposure.warning(mode: .transparent, listen: any, inspecting: true, authenticated: false) == nil)
    }
}

import Foundation
import Testing
import Tunnel
@testable import TVCore

/// `tv exec`'s resolv.conf goes to the first folder that takes it: a data folder that cannot be
/// written (a full disk, found by a new-user trial) falls back to the next; none says why.
@Suite struct ExecResolvConfFileTests {
    @Test("the first folder that takes it: 0644, the text; a folder that cannot be written is passed over")
    func fallsBack() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("resolv-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = try ExecResolvConfFile.write("nameserver 10.77.0.53\n", pid: 4242, folders: [dir + "/missing", dir])
        #expect(path == dir + "/exec-4242.resolv.conf")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "nameserver 10.77.0.53\n")
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o644)
        // A stale one of a killed exec with the same pid is replaced.
        #expect(try ExecResolvConfFile.write("nameserver 10.77.0.53\nnameserver fd77::53\n", pid: 4242, folders: [dir]) == path)
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasSuffix("fd77::53\n"))
    }

    @Test("no folder takes it: the first folder's error, in words, not a missing privilege")
    func noFolder() {
        #expect(throws: TunnelError.cannotWriteResolvConf(folder: "/nonexistent-tv/run", reason: "no such file or directory")) {
            try ExecResolvConfFile.write("x\n", pid: 1, folders: ["/nonexistent-tv/run", "/nonexistent-tv/other"])
        }
        #expect(TunnelError.cannotWriteResolvConf(folder: "/d/run", reason: "no space left on device").message
                == "tv could not write the tunnel's resolv.conf in /d/run (no space left on device), nor in /run/tunnelvision; make room or permission there and try again.")
    }

    @Test("a missing privilege says what it is needed for: tv exec's namespace, tun mode's routing (a trial read 'a network namespace' for tun mode)")
    func needsPrivileges() {
        #expect(TunnelError.needsPrivileges(command: "tv run --mode tun", missing: "CAP_NET_ADMIN", purpose: "to make a TUN device and route this host's traffic through it").message
                == "tv run --mode tun needs root (it lacks CAP_NET_ADMIN) to make a TUN device and route this host's traffic through it; run it with sudo.")
    }
}

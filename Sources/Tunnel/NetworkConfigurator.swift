import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the `ip` (iproute2) commands and sysctl writes that configure a namespace, on the
/// calling thread (so from a `NamespaceThread` job they change that namespace), and keeps a
/// transcript of what was done (`--dry-run` prints the same lines without running them).
public struct NetworkConfigurator {
    /// Each command as typed (`ip link set tv0 up`, `sysctl -w net.ipv6.conf.tv0.accept_ra=0`).
    public private(set) var transcript: [String] = []
    public let dryRun: Bool

    public init(dryRun: Bool = false) { self.dryRun = dryRun }

    /// Runs `ip ARGS…`.
    /// - Throws: `TunnelError.configuration` with the command and its output, or
    ///   `.missingProgram` when iproute2 is not installed.
    public mutating func ip(_ arguments: [String]) throws {
        transcript.append((["ip"] + arguments).joined(separator: " "))
        guard !dryRun else { return }
        guard ChildProcess.resolve("ip", path: "/usr/sbin:/usr/bin:/sbin:/bin") != "ip" else {
            throw TunnelError.missingProgram("ip", package: "iproute2")
        }
        let (code, output) = try ChildProcess.run(["ip"] + arguments)
        guard code == 0 else { throw TunnelError.configuration(command: transcript.last!, output: output) }
    }

    /// `ip ARGS…`, returning whether it worked (for steps that may fail harmlessly, e.g. IPv6
    /// on a kernel that has it off).
    public mutating func tryIP(_ arguments: [String]) -> Bool {
        (try? ip(arguments)) != nil
    }

    /// The key of an interface's sysctl, as sysctl(8) spells it: a dot in the interface's name
    /// (a VLAN's `eth0.100`) written as a slash (`net.ipv4.conf.eth0/100.rp_filter`), so that
    /// the key's dots separate components only.
    public static func interfaceKey(_ family: String, _ interface: String, _ name: String) -> String {
        "net.\(family).conf.\(interface.replacingOccurrences(of: ".", with: "/")).\(name)"
    }

    /// `net.ipv4.conf.INTERFACE.rp_filter` as `interfaceKey` spells it.
    public static func rpFilterKey(_ interface: String) -> String { interfaceKey("ipv4", interface, "rp_filter") }

    /// The /proc/sys path of `key` (sysctl(8)'s rule: dots separate, a slash stands for a dot).
    public static func path(_ key: String) -> String {
        "/proc/sys/" + String(key.map { $0 == "." ? "/" : $0 == "/" ? "." : $0 })
    }

    /// Writes a sysctl through /proc/sys (the calling thread's network namespace). Returns the
    /// value it had, or nil when the key does not exist.
    @discardableResult
    public mutating func sysctl(_ key: String, _ value: String) -> String? {
        transcript.append("sysctl -w \(key)=\(value)")
        let path = Self.path(key)
        guard let old = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        guard !dryRun else { return old.trimmingCharacters(in: .whitespacesAndNewlines) }
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        if fd >= 0 {
            _ = value.withCString { write(fd, $0, strlen($0)) }
            close(fd)
        }
        return old.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Reads a sysctl, nil when it does not exist.
    public static func read(_ key: String) -> String? {
        let path = Self.path(key)
        return (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

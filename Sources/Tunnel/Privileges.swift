import Foundation

/// Whether this process holds the capabilities the TUN front-ends need: CAP_NET_ADMIN (bit 12:
/// TUN devices, links, routes, SO_MARK) and CAP_SYS_ADMIN (bit 21: namespaces, mounts), read
/// from the effective set in /proc/self/status (capabilities(7)).
public enum Privileges {
    public static let netAdmin = 12
    public static let sysAdmin = 21

    /// The names of the needed capabilities that are missing (empty when all are there).
    public static func missing(_ needed: [Int] = [netAdmin, sysAdmin], status: String? = nil) -> [String] {
        let text = status ?? ((try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? "")
        let effective = text.split(separator: "\n").first { $0.hasPrefix("CapEff:") }
            .flatMap { UInt64($0.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
        return needed.filter { effective & (1 << UInt64($0)) == 0 }.map { $0 == netAdmin ? "CAP_NET_ADMIN" : $0 == sysAdmin ? "CAP_SYS_ADMIN" : "capability \($0)" }
    }
}

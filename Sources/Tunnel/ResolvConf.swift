import Foundation
import Proxy

/// The nameservers of a resolv.conf(5) file: where `tv exec` forwards the queries its command
/// sends to the tunnel's DNS address. A loopback stub (systemd-resolved's 127.0.0.53) is kept:
/// the forwarder's sockets live outside the command's namespace, where the stub answers.
public enum ResolvConf {
    /// `nameserver ADDRESS` lines in order (IPv6 zone ids such as `%eth0` dropped), port 53.
    public static func nameservers(in text: String) -> [SocketAddress] {
        var out: [SocketAddress] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver" else { continue }
            let address = words[1].split(separator: "%").first.map(String.init) ?? ""
            if let server = SocketAddress(numericHost: address, port: 53), !out.contains(server) { out.append(server) }
        }
        return out
    }

    /// The nameservers of the file at `path` (empty when it cannot be read).
    public static func nameservers(atPath path: String = "/etc/resolv.conf") -> [SocketAddress] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return nameservers(in: text)
    }
}

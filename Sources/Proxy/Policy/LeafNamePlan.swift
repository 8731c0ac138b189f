import LocalCA

/// Which names the forged leaf carries (interop cases 1–4).
///
/// The SNI when the client sent one; otherwise the destination the client asked for (a CONNECT
/// name or the IP address; in the TUN and transparent modes the original destination's address;
/// an IP becomes an iPAddress SAN, never a DNS name, mitmproxy#772), plus the address the client
/// dialled when that is not the destination (reverse mode: the listener's address it reached, as
/// in `curl https://127.0.0.1:LISTEN/`, which sends no SNI). The real certificate's SANs are always
/// added (`LeafIdentity.adding`), so a client asking for another name the server covers still
/// matches.
public enum LeafNamePlan {
    /// - Parameters:
    ///   - sni: the client's SNI, normalised; nil when it sent none.
    ///   - destinationHost: the destination's host (a name or an address literal).
    ///   - dialledAddress: the address the client connected to when it is not the destination
    ///     (reverse mode); nil otherwise. Used only when there is no SNI.
    ///   - upstreamSANs: the real server certificate's SANs.
    /// - Throws: `CAError` when no usable name remains (an SNI that cannot go in a certificate,
    ///   or a wildcard).
    public static func identity(sni: String?, destinationHost: String, dialledAddress: IPAddress? = nil,
                                upstreamSANs: [SubjectAlternativeName]) throws -> LeafIdentity {
        let base: LeafIdentity
        if let sni {
            // An SNI names one host (RFC 6066 §3); `*` is no host name's character, so a client
            // asking for `*.example.com` gets no wildcard leaf (it did: a new-user trial).
            guard !sni.contains("*") else { throw CAError.invalidName(sni, reason: "a server name indication names one host, and '*' is not part of a host name") }
            base = try LeafIdentity(names: [sni])
        } else if let identity = try? LeafIdentity(names: [destinationHost]) {
            base = identity.adding(dialledAddress.map { [.ip($0)] } ?? [])
        } else if let dialledAddress {
            base = try LeafIdentity(dnsNames: [], ipAddresses: [dialledAddress])
        } else {
            // The destination is not usable either: the server's names alone.
            let dns = upstreamSANs.compactMap { if case .dns(let n) = $0 { return n } else { return nil } }
            let ips = upstreamSANs.compactMap { if case .ip(let a) = $0 { return a } else { return nil } }
            base = try LeafIdentity(dnsNames: dns.filter { (try? LeafIdentity.normalizeDNSName($0)) != nil }, ipAddresses: ips)
        }
        return base.adding(upstreamSANs)
    }
}

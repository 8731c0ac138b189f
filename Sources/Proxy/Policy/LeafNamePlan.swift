import LocalCA

/// Which names the forged leaf carries (interop cases 1–4).
///
/// The SNI when the client sent one; otherwise the destination the client asked for (a CONNECT
/// name or the IP address; an IP becomes an iPAddress SAN, never a DNS name, mitmproxy#772) plus
/// the real certificate's SANs. The real certificate's SANs are always added
/// (`LeafIdentity.adding`), so a client asking for another name the server covers still matches.
public enum LeafNamePlan {
    /// - Throws: `CAError` when no usable name remains (an SNI that cannot go in a certificate).
    public static func identity(sni: String?, destinationHost: String, upstreamSANs: [SubjectAlternativeName]) throws -> LeafIdentity {
        let base: LeafIdentity
        if let sni {
            base = try LeafIdentity(names: [sni])
        } else if let identity = try? LeafIdentity(names: [destinationHost]) {
            base = identity
        } else {
            // The destination is not usable either: the server's names alone.
            let dns = upstreamSANs.compactMap { if case .dns(let n) = $0 { return n } else { return nil } }
            let ips = upstreamSANs.compactMap { if case .ip(let a) = $0 { return a } else { return nil } }
            base = try LeafIdentity(dnsNames: dns.filter { (try? LeafIdentity.normalizeDNSName($0)) != nil }, ipAddresses: ips)
        }
        return base.adding(upstreamSANs)
    }
}

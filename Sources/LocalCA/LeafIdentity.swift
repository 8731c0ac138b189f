/// The server identity a leaf is minted for: DNS names and IP addresses, normalised.
///
/// Normalisation (../shared/notes/interop-cases.md cases 1–4): names are lowercased, a trailing
/// dot (the DNS root label) is removed, duplicates are dropped in order. Names must be ASCII:
/// IDNs are accepted as A-labels (`xn--…`, RFC 5890 §2.3.2.1). Each label is 1–63 letters,
/// digits, hyphens or underscores; the whole name is at most 253 characters (RFC 1035 §2.3.4).
/// A wildcard is allowed only as the whole left-most label (`*.example.com`, RFC 6125 §6.4.3).
/// An IP literal is an iPAddress SAN, never a DNS name (mitmproxy#772).
public struct LeafIdentity: Sendable, Hashable {
    /// DNS names, normalised, in the order given (first one is the CN candidate).
    public let dnsNames: [String]
    /// IP addresses, in the order given.
    public let ipAddresses: [IPAddress]
    /// The name the identity was made for (the first one given), kept through `adding`: the one
    /// a client asked for, where the SANs list DNS names first (an address asked for comes after
    /// the server's copied names). Nil when none was given first.
    public let asked: SubjectAlternativeName?

    /// Builds an identity from host names and/or IP literals.
    /// - Throws: `CAError.invalidName` for a name that cannot go into a certificate,
    ///   `CAError.noNames` when the list is empty.
    public init(names: [String]) throws {
        var dns: [String] = []
        var ips: [IPAddress] = []
        for raw in names {
            if let ip = IPAddress(raw) {
                if !ips.contains(ip) { ips.append(ip) }
                continue
            }
            let name = try LeafIdentity.normalizeDNSName(raw)
            if !dns.contains(name) { dns.append(name) }
        }
        guard !dns.isEmpty || !ips.isEmpty else { throw CAError.noNames }
        self.dnsNames = dns
        self.ipAddresses = ips
        asked = names.first.flatMap { IPAddress($0).map { .ip($0) } ?? (try? LeafIdentity.normalizeDNSName($0)).map { .dns($0) } }
    }

    /// Builds an identity from already-split DNS names and addresses (names are normalised).
    /// - Throws: as `init(names:)`.
    public init(dnsNames: [String], ipAddresses: [IPAddress]) throws {
        var dns: [String] = []
        for raw in dnsNames {
            let name = try LeafIdentity.normalizeDNSName(raw)
            if !dns.contains(name) { dns.append(name) }
        }
        var ips: [IPAddress] = []
        for ip in ipAddresses where !ips.contains(ip) { ips.append(ip) }
        guard !dns.isEmpty || !ips.isEmpty else { throw CAError.noNames }
        self.dnsNames = dns
        self.ipAddresses = ips
        asked = dns.first.map { .dns($0) } ?? ips.first.map { .ip($0) }
    }

    /// This identity plus the SANs of the real server's certificate (copied so that a client
    /// asking for another name the server covers still matches). SANs that cannot go into a
    /// certificate are skipped: a server's odd name must not stop its connection.
    public func adding(_ sans: [SubjectAlternativeName]) -> LeafIdentity {
        var dns = dnsNames
        var ips = ipAddresses
        for san in sans {
            switch san {
            case .dns(let raw):
                if let name = try? LeafIdentity.normalizeDNSName(raw), !dns.contains(name) { dns.append(name) }
            case .ip(let ip):
                if !ips.contains(ip) { ips.append(ip) }
            }
        }
        return LeafIdentity(trusted: dns, ips, asked: asked)
    }

    /// The names of `sans` only, in their order (already normalised: taken from an identity).
    func keeping(_ sans: [SubjectAlternativeName]) -> LeafIdentity {
        LeafIdentity(trusted: sans.compactMap { if case .dns(let n) = $0 { return n } else { return nil } },
                     sans.compactMap { if case .ip(let a) = $0 { return a } else { return nil } }, asked: asked)
    }

    private init(trusted dns: [String], _ ips: [IPAddress], asked: SubjectAlternativeName?) {
        self.dnsNames = dns
        self.ipAddresses = ips
        self.asked = asked
    }

    /// The subject CN: the first name when it fits `ub-common-name` (64 characters, RFC 5280
    /// App. A.1); nil otherwise, and the SAN extension is then critical (RFC 5280 §4.2.1.6).
    public var commonName: String? {
        let first = dnsNames.first ?? ipAddresses.first?.description
        guard let first, first.utf8.count <= 64 else { return nil }
        return first
    }

    /// Every name as a SAN, DNS names first, in order.
    public var subjectAlternativeNames: [SubjectAlternativeName] {
        dnsNames.map { .dns($0) } + ipAddresses.map { .ip($0) }
    }

    /// Normalises one DNS name or refuses it.
    /// - Throws: `CAError.invalidName` with the reason.
    public static func normalizeDNSName(_ raw: String) throws -> String {
        var name = raw.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty else { throw CAError.invalidName(raw, reason: "it is empty") }
        guard name.unicodeScalars.allSatisfy({ $0.isASCII }) else {
            throw CAError.invalidName(raw, reason: "it is not ASCII; give internationalised names as A-labels (xn--…)")
        }
        guard name.utf8.count <= 253 else {
            throw CAError.invalidName(raw, reason: "it is longer than 253 characters")
        }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for (index, label) in labels.enumerated() {
            if label.isEmpty { throw CAError.invalidName(raw, reason: "it has an empty label") }
            if label == "*" {
                guard index == 0, labels.count > 2 else {
                    throw CAError.invalidName(raw, reason: "a wildcard must be the whole left-most label of a name with at least two more labels")
                }
                continue
            }
            if label.utf8.count > 63 {
                throw CAError.invalidName(raw, reason: "the label '\(label.prefix(20))…' is longer than 63 characters")
            }
            for c in label.utf8 {
                let ok = (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x5F
                if !ok { throw CAError.invalidName(raw, reason: "it contains '\(Character(Unicode.Scalar(c)))', which a host name cannot hold") }
            }
            if label.hasPrefix("-") || label.hasSuffix("-") {
                throw CAError.invalidName(raw, reason: "the label '\(label)' starts or ends with a hyphen")
            }
        }
        // RFC 1123 §2.1; browsers (WHATWG URL's IPv4 parser) read such a host as an address, so
        // the name would never match: `1.2.3` is 1.2.0.3 to them, `999.1.1.1` no host at all.
        if let last = labels.last, last.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            throw CAError.invalidName(raw, reason: "its last label is all digits, which clients read as an IPv4 address, not a name; write an address as four numbers 0-255 (a.b.c.d)")
        }
        return name
    }
}

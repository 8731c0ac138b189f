/// The names of ICMP (RFC 792, IANA "ICMP Type Numbers") and ICMPv6 (RFC 4443 §2.1, IANA "ICMPv6
/// Parameters") messages, by type and, where a type's codes are named, by code.
public enum ICMPNames {
    /// `Echo request`, `Destination unreachable (port unreachable)`, `Type 42 (code 1)`.
    public static func name(isV6: Bool, type: UInt8, code: UInt8) -> String {
        guard let base = typeName(isV6: isV6, type: type) else { return "Type \(type) (code \(code))" }
        if let named = codeName(isV6: isV6, type: type, code: code) { return "\(base) (\(named))" }
        return code == 0 ? base : "\(base) (code \(code))"
    }

    /// The type's name alone (`Destination unreachable`), nil for a type without one.
    public static func typeName(isV6: Bool, type: UInt8) -> String? { (isV6 ? v6Types : v4Types)[type] }

    /// The code's name where the type's codes are named (`port unreachable`), else nil.
    public static func codeName(isV6: Bool, type: UInt8, code: UInt8) -> String? { (isV6 ? v6Codes : v4Codes)[type]?[code] }

    static let v4Types: [UInt8: String] = [
        0: "Echo reply", 3: "Destination unreachable", 4: "Source quench", 5: "Redirect", 8: "Echo request",
        9: "Router advertisement", 10: "Router solicitation", 11: "Time exceeded", 12: "Parameter problem",
        13: "Timestamp request", 14: "Timestamp reply",
    ]
    static let v4Codes: [UInt8: [UInt8: String]] = [
        3: [0: "network unreachable", 1: "host unreachable", 2: "protocol unreachable", 3: "port unreachable",
            4: "fragmentation needed and DF set", 5: "source route failed", 6: "destination network unknown",
            7: "destination host unknown", 8: "source host isolated", 9: "network administratively prohibited",
            10: "host administratively prohibited", 11: "network unreachable for type of service",
            12: "host unreachable for type of service", 13: "communication administratively prohibited"],
        5: [0: "for the network", 1: "for the host", 2: "for the type of service and network", 3: "for the type of service and host"],
        11: [0: "TTL exceeded in transit", 1: "fragment reassembly time exceeded"],
    ]
    static let v6Types: [UInt8: String] = [
        1: "Destination unreachable", 2: "Packet too big", 3: "Time exceeded", 4: "Parameter problem",
        128: "Echo request", 129: "Echo reply", 130: "Multicast listener query", 131: "Multicast listener report",
        132: "Multicast listener done", 133: "Router solicitation", 134: "Router advertisement",
        135: "Neighbor solicitation", 136: "Neighbor advertisement", 137: "Redirect", 143: "Multicast listener report v2",
    ]
    static let v6Codes: [UInt8: [UInt8: String]] = [
        1: [0: "no route to destination", 1: "communication administratively prohibited", 2: "beyond scope of source address",
            3: "address unreachable", 4: "port unreachable", 5: "source address failed policy", 6: "reject route to destination"],
        3: [0: "hop limit exceeded in transit", 1: "fragment reassembly time exceeded"],
        4: [0: "erroneous header field", 1: "unrecognized Next Header type", 2: "unrecognized IPv6 option"],
    ]
}

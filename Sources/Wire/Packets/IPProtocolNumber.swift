/// Protocol numbers the packet readers name (IANA "Assigned Internet Protocol Numbers").
public enum IPProtocolNumber {
    public static let icmp: UInt8 = 1
    public static let tcp: UInt8 = 6
    public static let udp: UInt8 = 17
    public static let icmpv6: UInt8 = 58
    /// IPv6 extension headers the readers walk (RFC 8200 §4.1).
    public static let hopByHop: UInt8 = 0
    public static let routing: UInt8 = 43
    public static let fragment: UInt8 = 44
    public static let destinationOptions: UInt8 = 60
    public static let noNextHeader: UInt8 = 59
}

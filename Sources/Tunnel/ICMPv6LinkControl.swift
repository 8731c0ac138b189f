/// The ICMPv6 messages a host's kernel sends on a link by itself (not a program's): what the TUN
/// engine drops as `PacketDrop.linkControl`.
public enum ICMPv6LinkControl {
    /// Whether an ICMPv6 message of `type` is link control: multicast listener query, report and
    /// done (130–132, RFC 2710; 143, the MLDv2 report, RFC 3810 §5.2), router and neighbour
    /// solicitation and advertisement and redirect (133–137, RFC 4861 §4), inverse neighbour
    /// discovery (141–142, RFC 3122), and multicast router advertisement, solicitation and
    /// termination (151–153, RFC 4286).
    public static func isLinkControl(type: UInt8) -> Bool {
        switch type {
        case 130...137, 141, 142, 143, 151...153: return true
        default: return false
        }
    }
}

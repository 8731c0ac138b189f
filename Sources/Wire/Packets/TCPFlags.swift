/// The TCP header's flag bits (RFC 9293 §3.1: byte 13, CWR ECE URG ACK PSH RST SYN FIN from high
/// bit to low) and their acronyms: the one set of names the tunnel's NAT, the packet synthesizer,
/// the capture's packet rows and `tv packet` use.
public enum TCPFlags {
    public static let fin: UInt8 = 0x01
    public static let syn: UInt8 = 0x02
    public static let rst: UInt8 = 0x04
    public static let psh: UInt8 = 0x08
    public static let ack: UInt8 = 0x10
    public static let urg: UInt8 = 0x20
    public static let ece: UInt8 = 0x40
    public static let cwr: UInt8 = 0x80

    private static let names: [(UInt8, String)] = [
        (fin, "FIN"), (syn, "SYN"), (rst, "RST"), (psh, "PSH"), (ack, "ACK"), (urg, "URG"), (ece, "ECE"), (cwr, "CWR"),
    ]

    /// The set flags' acronyms, low bit first as Wireshark's Info column writes them
    /// ("SYN, ACK"); "" for none.
    public static func acronyms(_ flags: UInt8) -> String {
        names.filter { flags & $0.0 != 0 }.map(\.1).joined(separator: ", ")
    }
}

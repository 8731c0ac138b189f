import Wire
import Capture
import TVHome
import Tunnel

/// The header grid of `tv packet`: a packet's dissection (`PacketDissection`) as named fields,
/// layer by layer (the two ends, what only that protocol has), then the DNS fields of a port-53
/// datagram; and the same as JSON. Pure; every network-derived string passes `TerminalText`
/// when drawn.
public enum PacketHeaderGrid {
    /// One named field.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A titled group of fields (`IPv4`, `TCP`, `DNS`).
    public struct Section: Sendable, Equatable {
        public var title: String
        public var fields: [Field]
        public init(_ title: String, _ fields: [Field]) {
            self.title = title
            self.fields = fields
        }
    }

    /// The sections for `d`, in layer order.
    public static func sections(_ d: PacketDissection) -> [Section] {
        var out: [Section] = []
        switch d.ip {
        case .v4(let ip):
            var fields = [Field("from", "\(ip.source)"), Field("to", "\(ip.destination)"), Field("TTL", "\(ip.ttl)"),
                          Field("id", hex(ip.identification, 4)),
                          Field("fragment", fragmentWords(dontFragment: ip.dontFragment, more: ip.moreFragments, offset: ip.fragmentOffset))]
            if ip.headerLength != 20 { fields.append(Field("header", "\(ip.headerLength) bytes")) }
            out.append(Section("IPv4", fields))
        case .v6(let ip):
            var fields = [Field("from", "\(ip.source)"), Field("to", "\(ip.destination)"), Field("hop limit", "\(ip.hopLimit)"),
                          Field("flow label", hex(ip.flowLabel, 5))]
            if let f = ip.fragment {
                fields.append(Field("id", hex(f.identification, 8)))
                fields.append(Field("fragment", fragmentWords(dontFragment: false, more: f.moreFragments, offset: f.offset)))
            }
            if !ip.extensionHeaders.isEmpty {
                fields.append(Field("extension headers", ip.extensionHeaders.map(extensionName).joined(separator: ", ")))
            }
            out.append(Section("IPv6", fields))
        }
        switch d.transport {
        case .tcp(let t)?:
            var fields = [Field("ports", "\(t.sourcePort) → \(t.destinationPort)"), Field("seq", "\(t.sequenceNumber)"),
                          Field("ack", "\(t.acknowledgmentNumber)"), Field("window", "\(t.window)"),
                          Field("flags", flagNames(t.flags))]
            if !t.options.isEmpty { fields.append(Field("options", t.options.map(\.description).joined(separator: ", "))) }
            if t.urgentPointer != 0 { fields.append(Field("urgent pointer", "\(t.urgentPointer)")) }
            out.append(Section("TCP", fields))
        case .udp(let u)?:
            out.append(Section("UDP", [Field("ports", "\(u.sourcePort) → \(u.destinationPort)"), Field("length", "\(u.length) bytes")]))
        case .icmp(let i)?:
            // Each number with its own name (a trial read "type 3 (Destination unreachable (port unreachable)) code 3").
            let type = ICMPNames.typeName(isV6: i.isV6, type: i.type).map { "\(i.type) (\($0))" } ?? "\(i.type)"
            let code = ICMPNames.codeName(isV6: i.isV6, type: i.type, code: i.code).map { "\(i.code) (\($0))" } ?? "\(i.code)"
            var fields = [Field("type", type), Field("code", code)]
            // A path-MTU message's MTU, and what an error quotes of the packet it is about (a
            // trial's `tv packet` showed neither beside "fragmentation needed").
            if let mtu = i.mtu { fields.append(Field(i.isV6 ? "MTU" : "next-hop MTU", "\(mtu) bytes")) }
            out.append(Section(i.isV6 ? "ICMPv6" : "ICMP", fields))
            if let q = i.quoted { out.append(Section("Quoted packet", quotedFields(q))) }
        case nil:
            break
        }
        if let dns = d.dns { out.append(Section("DNS", dnsFields(dns))) }
        return out
    }

    /// The DNS fields, in the order that puts the name looked up and its record type together.
    static func dnsFields(_ reading: DNSReading) -> [Field] {
        switch reading {
        case .captureKeptTooLittle:
            return [Field("message", "the capture kept too little of this packet to read it; `tv settings set capture.snaplen` keeps more from the next session")]
        case .notDNS(let reason):
            return [Field("message", "these bytes are not a DNS message (\(reason))")]
        case .partOfTCPMessage:
            return [Field("message", "part of a DNS message over TCP that other segments complete (tshark reassembles it)")]
        case .message(let m):
            var fields = [Field("message", m.isReply ? "reply" : "query"), Field("looked up", m.name.map(nameText) ?? "no question"),
                          Field("record type", m.recordType.map(DNSRecordTypeNames.name) ?? "none")]
            guard let answer = m.answer else { return fields }
            switch answer.outcome {
            case .answered: break
            case .noSuchName: fields.append(Field("answer", "No such name (NXDOMAIN)"))
            case .noRecordsOfThatType: fields.append(Field("answer", "No records of that type (the name exists)"))
            case .failed(let code): fields.append(Field("answer", "failed: \(DNSMessage.responseCodeName(code))"))
            }
            if !answer.addresses.isEmpty { fields.append(Field("addresses", answer.addresses.map(\.description).joined(separator: ", "))) }
            if !answer.names.isEmpty { fields.append(Field("names", answer.names.map(nameText).joined(separator: ", "))) }
            if !answer.otherRecords.isEmpty {
                fields.append(Field("other records", answer.otherRecords.map { "\($0.count) \(DNSRecordTypeNames.name($0.type))" }
                    .joined(separator: ", ")))
            }
            return fields
        }
    }

    /// The fields of the packet an ICMP error quotes: its length as its header gives it, with
    /// how much of it the error carries.
    static func quotedFields(_ q: QuotedPacket) -> [Field] {
        var fields = [Field("from", "\(q.source)"), Field("to", "\(q.destination)"), Field("protocol", protocolName(q.protocolNumber)),
                      Field("length", "\(Units.grouped(Int64(q.length))) bytes (\(Units.grouped(Int64(q.bytesQuoted))) quoted)")]
        if let from = q.sourcePort, let to = q.destinationPort { fields.append(Field("ports", "\(from) → \(to)")) }
        if let udp = q.udpLength { fields.append(Field("UDP length", "\(Units.grouped(Int64(udp))) bytes")) }
        return fields
    }

    /// `UDP`, `TCP`, `ICMP`, `ICMPv6`, else the number.
    static func protocolName(_ number: UInt8) -> String {
        switch number {
        case IPProtocolNumber.tcp: return "TCP"
        case IPProtocolNumber.udp: return "UDP"
        case IPProtocolNumber.icmp: return "ICMP"
        case IPProtocolNumber.icmpv6: return "ICMPv6"
        default: return "\(number)"
        }
    }

    static func nameText(_ name: String) -> String { name.isEmpty ? "." : name }

    static func flagNames(_ flags: UInt8) -> String {
        let names = TCPFlags.acronyms(flags)
        return names.isEmpty ? "none" : names
    }

    static func fragmentWords(dontFragment: Bool, more: Bool, offset: Int) -> String {
        var words: [String] = []
        if dontFragment { words.append("don't fragment") }
        if more || offset != 0 {
            words.append("offset \(offset)")
            words.append(more ? "more follow" : "last")
        }
        return words.isEmpty ? "none" : words.joined(separator: ", ")
    }

    static func extensionName(_ number: UInt8) -> String {
        switch number {
        case 0: return "hop-by-hop"
        case 43: return "routing"
        case 44: return "fragment"
        case 60: return "destination options"
        default: return "\(number)"
        }
    }

    static func hex(_ v: some BinaryInteger, _ width: Int) -> String {
        let s = String(v, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// The sections as JSON: `{"IPv4": {"from": …}, "TCP": {…}}`, values as drawn.
    public static func json(_ sections: [Section]) -> JSONValue {
        .object(sections.map { ($0.title, .object($0.fields.map { ($0.name, .string($0.value)) })) })
    }
}

import Capture
import CommandLineParser
import TVCore

/// `tv packet FLOW N`: one captured packet down to its bytes (the seed's Packet detail).
enum PacketCommand {
    static let spec = CommandSpec(
        name: "packet", summary: "Show one captured packet: when, direction, size, its headers (and DNS fields), then its bytes.",
        discussion: "N is the packet's number in `tv packets FLOW`. The header grid reads the packet's bytes: IPv4/IPv6 (addresses, TTL or hop limit, id, fragment fields), TCP (ports, seq/ack, window, flags, options), UDP (ports, length), ICMP/ICMPv6 (type and code), and for port 53 the DNS message (what was looked up and what the reply answered). The bytes are read from the capture file at the packet's place and drawn as hex + ASCII, at most 2 KB. A deleted capture, a read failure, a packet the snap length cut, and the display cap are each said; when the bytes cannot be shown (a deleted or damaged capture, a read failure), what the row holds is printed and the exit status is 1.",
        options: [CaptureCommands.json],
        positionals: [PositionalSpec("FLOW", help: "The flow's id, as `tv flows` prints it."),
                      PositionalSpec("N", help: "The packet's number within the flow, as `tv packets FLOW` prints it.")])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["packet": packet]

    static func packet(_ inv: Invocation) throws -> Int32 {
        let id = try CaptureCommands.flowID(inv.command.positionals[0])
        let text = inv.command.positionals[1]
        guard let n = Int64(text), n > 0 else { throw UsageRefusal("'\(text)' is not a packet number; `tv packets \(id)` lists them (1, 2, …).") }
        try FlowCommands.askSessionToFlush(inv)
        // A flow that does not exist is not one with no packets.
        do {
            let store = try FlowCommands.openStoreForReading(inv)
            defer { store.close() }
            guard try store.flow(id: id) != nil else { throw ContentRefusal.noFlow(id) }
        }
        let catalog = try CaptureCommands.catalog(inv, writing: false)
        defer { catalog.close() }
        let detail = try PacketDetailReading.read(catalog, flow: UInt64(id), n: n)
        if inv.json {
            inv.console.line(detail.json.serialized(pretty: true))
        } else {
            for line in detail.lines { inv.console.line(line) }
        }
        // A script asking for the bytes learns they are not there from the status too (a trial's
        // `tv packet` on a deleted capture exited 0).
        return detail.bytesShown ? 0 : 1
    }
}

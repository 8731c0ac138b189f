import FlowStore
import FlowTerms
import Testing
@testable import TVCore

/// The ID column of `tv flows --store`: `MACHINE:ID`, or `MACHINE/PREFIX:ID` when a machine
/// name is shared by several instances on the page; `tv flow` takes either back.
@Suite struct SharedInstanceLabelTests {
    static func flow(_ id: Int64, machine: String, instance: String) -> FlowRecord {
        var f = FlowRecord(startTime: id, clientAddress: "10.0.0.1", clientPort: 1, serverAddress: "192.0.2.1", serverPort: 443,
                           host: "a.test", hostOrigin: .sni, status: .encrypted)
        f.id = id
        f.instance = InstanceIdentity(id: instance, machine: machine)
        return f
    }

    @Test("two instances named alike are told apart by their id's first 8 characters; a lone one keeps MACHINE:ID")
    func labels() {
        let a = Self.flow(20, machine: "vm", instance: "3d23a1b0-0000-4000-8000-000000000001")
        let b = Self.flow(20, machine: "vm", instance: "9f00cafe-0000-4000-8000-000000000002")
        let c = Self.flow(7, machine: "lab", instance: "11111111-0000-4000-8000-000000000003")
        #expect(SharedInstancePresentation.sharedMachineNames([a, b, c]) == ["vm"])
        let page = FlowListPresentation(page: FlowPage(flows: [a, b, c], nextCursor: nil), now: 100)
        #expect(page.rows.map(\.id) == ["vm/3d23a1b0:20", "vm/9f00cafe:20", "lab:7"])
        #expect(SharedInstancePresentation.parseLabel("vm/3d23a1b0:20")! == ("vm/3d23a1b0", 20))
        #expect(SharedInstancePresentation.parseLabel("lab:7")! == ("lab", 7))
        #expect(SharedInstancePresentation.parseLabel("12")! == (nil, 12))
        #expect(SharedInstancePresentation.parseLabel("vm:") == nil && SharedInstancePresentation.parseLabel(":3") == nil
                && SharedInstancePresentation.parseLabel("x") == nil && SharedInstancePresentation.parseLabel("vm:-1") == nil)
        // A page showing one of two instances named alike in the store is qualified too (a
        // trial's `vm:18` was ambiguous to `tv flow 18 --instance vm`).
        let lone = FlowListPresentation(page: FlowPage(flows: [a, c], nextCursor: nil), now: 100, machinesWithSeveralInstances: ["vm"])
        #expect(lone.rows.map(\.id) == ["vm/3d23a1b0:20", "lab:7"])
    }

    @Test("a shared request tv answered points to its flow in the shared store, not this data folder's of the id")
    func answeredHint() {
        let e = ExchangeRecord(id: 5, flowID: 6, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https", authority: "a.test",
                               path: "/", status: 502, requestTime: 0, state: .answered)
        let shared = RequestDetailPresentation(exchange: e, recorded: nil, sharedFrom: InstanceIdentity(id: "b60b58d2-0000-4000-8000-000000000009", machine: "vm"))
        #expect(shared.factLines()[2] == "  status 502 — answered by tv, not the server (`tv flow 6 --store URL --instance b60b58d2` says why)")
        #expect(RequestDetailPresentation(exchange: e, recorded: nil).factLines()[2] == "  status 502 — answered by tv, not the server (`tv flow 6` says why)")
        // Refused and never answered (the connection ended first): said so, not "answered".
        var refused = e
        refused.status = nil
        #expect(RequestDetailPresentation(exchange: refused, recorded: nil).factLines()[2]
                == "  status none — refused by tv and never sent to the server; the connection ended before tv's answer could follow the responses to the requests before it (`tv flow 6` says why)")
        #expect(RequestDetailPresentation(exchange: refused, recorded: nil).missingResponse()
                == "  (no response: the request was refused by tv and never sent to the server; the connection ended before tv's answer could follow the responses to the requests before it; the flow's error says why tv refused it)")
    }
}

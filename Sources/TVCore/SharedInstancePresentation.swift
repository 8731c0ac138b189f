import Foundation
import FlowStore
import TVHome

/// How a flow read from the shared store shows the instance that saw it (`tv flows --store`,
/// `tv flow ID --store`, `tv store instances`); a flow of this data folder shows none of it.
public enum SharedInstancePresentation {
    /// The ID column: `MACHINE:ID` for a shared row (machine names are the instances' own words,
    /// escaped), the bare id for a local one.
    /// - Parameter qualified: the machine's name is shared by several instances on the page:
    ///   `MACHINE/PREFIX:ID`, PREFIX the first 8 characters of the instance id (a trial's list
    ///   showed two different flows as `vm:20`); `tv flow LABEL --store` and `--instance
    ///   MACHINE/PREFIX` take it back.
    public static func id(_ flow: FlowRecord, qualified: Bool = false) -> String {
        guard let instance = flow.instance else { return String(flow.id) }
        let name = TerminalText.line(instance.machine) + (qualified ? "/" + String(instance.id.prefix(8)) : "")
        return name + ":" + String(flow.id)
    }

    /// The machine names that more than one instance among `flows` carries.
    public static func sharedMachineNames(_ flows: [FlowRecord]) -> Set<String> {
        var ids: [String: Set<String>] = [:]
        for flow in flows { if let instance = flow.instance { ids[instance.machine, default: []].insert(instance.id) } }
        return Set(ids.filter { $0.value.count > 1 }.keys)
    }

    /// A flow label as the list prints it: `ID`, `MACHINE:ID`, `MACHINE/PREFIX:ID` or an
    /// instance id (or prefix) then `:ID`. - Returns: the instance part (nil for a bare id) and
    /// the id; nil when it is no label.
    public static func parseLabel(_ text: String) -> (instance: String?, id: Int64)? {
        guard let colon = text.lastIndex(of: ":") else { return Int64(text).flatMap { $0 > 0 ? (nil, $0) : nil } }
        let instance = String(text[..<colon])
        guard !instance.isEmpty, let id = Int64(text[text.index(after: colon)...]), id > 0 else { return nil }
        return (instance, id)
    }

    /// The `instance` line of `tv flow`: where the flow's content and packets are.
    public static func sentence(_ instance: InstanceIdentity) -> String {
        "\(TerminalText.line(instance.machine)) (instance \(TerminalText.line(instance.id))); its content and packets, if kept, are in that instance's data folder"
    }

    /// `"instance": {"id": …, "machine": …}` for a shared row; nothing for a local one, so the
    /// local JSON is unchanged.
    public static func jsonField(_ instance: InstanceIdentity?) -> [(String, JSONValue)] {
        guard let instance else { return [] }
        return [("instance", .object([("id", .string(instance.id)), ("machine", .string(instance.machine))]))]
    }

    /// `tv store instances`: one line per instance, most recently seen first.
    public static func lines(_ instances: [SharedInstance], now: Int64) -> [String] {
        guard !instances.isEmpty else {
            return ["No instance has written to this shared store yet; start one with `tv run --store URL`."]
        }
        let rows = [["MACHINE", "INSTANCE", "FLOWS", "FIRST SEEN", "LAST SEEN"]] + instances.map { i in
            [TerminalText.line(i.identity.machine), TerminalText.line(i.identity.id), String(i.flows),
             Units.relative(i.firstSeen, now: now), Units.relative(i.lastSeen, now: now)]
        }
        let widths = (0..<5).map { c in rows.map { $0[c].count }.max() ?? 0 }
        return rows.map { row in
            (0..<5).map { c in row[c].padding(toLength: widths[c], withPad: " ", startingAt: 0) }.joined(separator: "  ").trimmingTrailingSpaces()
        }
    }

    /// `tv store instances --json`.
    public static func json(_ instances: [SharedInstance]) -> JSONValue {
        .array(instances.map { i in
            .object([("id", .string(i.identity.id)), ("machine", .string(i.identity.machine)), ("flows", .int(Int64(i.flows))),
                     ("firstSeen", .int(i.firstSeen)), ("lastSeen", .int(i.lastSeen))])
        })
    }
}

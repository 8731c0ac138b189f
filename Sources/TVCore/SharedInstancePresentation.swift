import Foundation
import FlowStore
import TVHome

/// How a flow read from the shared store shows the instance that saw it (`tv flows --store`,
/// `tv flow ID --store`, `tv store instances`); a flow of this data folder shows none of it.
public enum SharedInstancePresentation {
    /// The ID column: `MACHINE:ID` for a shared row (machine names are the instances' own words,
    /// escaped), the bare id for a local one.
    public static func id(_ flow: FlowRecord) -> String {
        guard let instance = flow.instance else { return String(flow.id) }
        return TerminalText.line(instance.machine) + ":" + String(flow.id)
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

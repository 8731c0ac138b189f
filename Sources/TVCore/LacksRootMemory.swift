import FlowStore
import Foundation
import FlowTerms
import TVHome

/// The clients pinning memory keeps as lacking tv's root (`PinKind.lacksRoot`) are forgotten when
/// the data folder's root changes (`tv ca remake`, `import`, `create`, `remove`, `tv setup`):
/// each verdict was about the root before. A client that refused the old root was remembered,
/// passed through from then on, and failed the same way once it trusted the new one (a trial
/// after `tv ca remake`). A session running is told by its `ca-changed` request, which drops them
/// from its memory too.
public enum LacksRootMemory {
    /// Removes the rows; how many (0 when there is no database or it cannot be written: nothing
    /// then changes, and the session's own memory is still told).
    public static func forget(home: TVHome) -> Int {
        // No database is made for this (a first `tv ca create`).
        guard FileManager.default.fileExists(atPath: home.databasePath), let store = try? FlowStore(home: home) else { return 0 }
        defer { store.close() }
        return (try? store.clientPins.forget(kind: .lacksRoot)) ?? 0
    }

    /// "Forgot 2 clients …", or nil for none.
    public static func sentence(_ forgotten: Int) -> String? {
        guard forgotten > 0 else { return nil }
        return "Forgot \(forgotten == 1 ? "1 client" : "\(forgotten) clients") remembered as lacking tv's root (said of the root before): their next connections are inspected again."
    }
}

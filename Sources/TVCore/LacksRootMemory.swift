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
///
/// They are forgotten too when trust changes (`Occasion.trustChanged`): when tv itself put the
/// root in a store (`tv ca trust --apply`, `tv setup`), and by `tv pinned forget --lacks-root`,
/// the last step of every trust guide. tv cannot tell which remembered clients a store or a
/// runtime serves (a row names a client address and its ClientHello's fingerprint, not a program),
/// so all of them are forgotten: one that still lacks the root is refused once more and
/// remembered again, while one that trusts it now is inspected (a trial's Python client, kept as
/// lacking the root from its first attempt, got the real certificate after `tv ca trust --platform python`).
public enum LacksRootMemory {
    /// Why the clients were forgotten, for the sentence.
    public enum Occasion: Sendable, Equatable {
        /// The data folder's root was made, remade, imported or removed.
        case rootChanged
        /// The root was put in a trust store, or the user asked (`tv pinned forget --lacks-root`).
        case trustChanged
    }

    /// Removes the rows; how many (0 when there is no database or it cannot be written: nothing
    /// then changes, and the session's own memory is still told).
    public static func forget(home: TVHome) -> Int {
        // No database is made for this (a first `tv ca create`).
        guard FileManager.default.fileExists(atPath: home.databasePath), let store = try? FlowStore(home: home) else { return 0 }
        defer { store.close() }
        return (try? store.clientPins.forget(kind: .lacksRoot)) ?? 0
    }

    /// "Forgot 2 clients …", or nil for none.
    public static func sentence(_ forgotten: Int, _ occasion: Occasion = .rootChanged) -> String? {
        guard forgotten > 0 else { return nil }
        let clients = forgotten == 1 ? "1 client" : "\(forgotten) clients"
        switch occasion {
        case .rootChanged:
            return "Forgot \(clients) remembered as lacking tv's root (said of the root before): their next connections are inspected again."
        case .trustChanged:
            return "Forgot \(clients) remembered as lacking tv's root (said before the root was trusted): their next connections are inspected again, and one that still lacks it is remembered again."
        }
    }
}

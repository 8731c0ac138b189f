import Foundation
import TVHome

/// The largest flow id the shared store is known to hold for this data folder's instance, kept
/// beside the database (`$TV_HOME/instance-store-highest`: `INSTANCE-ID ID`, 0600) and not in
/// it: a backup of the database copied over it in place leaves this file as it was. The local
/// writer's ids go on past it even when the store does not answer at start, or the session runs
/// without the store (`--store ''`; a later `tv store backfill` sent its flows under ids the
/// store already had for other flows: a re-check). Written when a connection finds the store's
/// largest id, before each batch that goes past it is sent (`SharedIDFloor`), and when a
/// session that wrote to the store stops.
public enum StoreHighestMark {
    public static let fileName = "instance-store-highest"

    /// The mark for `instance`; nil when there is none for it (another id's, none, unreadable).
    public static func read(home: TVHome, instance: String) -> Int64? {
        guard let text = try? String(contentsOfFile: home.path + "/" + fileName, encoding: .utf8) else { return nil }
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, parts[0] == instance, let id = Int64(parts[1]), id > 0 else { return nil }
        return id
    }

    /// Raises the mark for `instance` to `id` (never lowers it); a failure to write is left
    /// unsaid (the store itself is asked again at each connection).
    public static func raise(home: TVHome, instance: String, to id: Int64) {
        guard id > (read(home: home, instance: instance) ?? 0) else { return }
        try? FileModes.writeAtomically(Array("\(instance) \(id)\n".utf8), to: home.path + "/" + fileName, mode: 0o600)
    }
}

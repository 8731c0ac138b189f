import Foundation

/// What an instance id was made for: this machine and this data folder's database file. The
/// shared store keys each row by instance id and the instance's own flow id, and flow ids come
/// from the database file (`FlowIDFloor`), so two data folders writing under one id overwrite
/// each other's rows: a data folder copied to another machine or baked into a VM or container
/// image, a backup restored (its ids go on from an older point), a database file removed and made
/// anew (its ids start again at 1). Each of those is a different database file or a different
/// machine, so the id is bound to both when it is first used (`$TV_HOME/instance-binding`) and a
/// data folder whose facts differ takes a new id: its earlier shared rows stay under the old one,
/// and nothing is overwritten. Two programs on one data folder (`tv run` beside `tv exec`) share
/// the database file and so the id. A pure policy; `InstanceIdentity.of` reads and writes the files.
public struct InstanceBinding: Sendable, Equatable {
    /// The machine: `machine-id:` and `/etc/machine-id`'s 32 hex digits (systemd's id of the
    /// installation, machine-id(5)), or `hostname:` and the host name where that file is missing
    /// or empty (many container images: their containers differ in host name). Nil: unknown.
    public var machine: String?
    /// The inode number of the data folder's database file (`stat(2)` `st_ino`; the device number is
    /// left out: it can change across reboots). A copy or a restore is a new inode; a rename or a
    /// move within one file system keeps it. Nil: unknown (no file yet).
    public var databaseInode: UInt64?
    /// The database file's birth time (`statx(2)` `stx_btime`, "SECONDS.NANOSECONDS"): a file
    /// removed and made anew often gets the inode number just freed (ext4 and tmpfs hand it out
    /// again at once), never the same birth time. Nil: unknown (the file system keeps none).
    public var databaseBirth: String?
    /// When the id was renewed: the first flow id recorded under it. The flows below it are the
    /// history of the folder this one was copied from, under that folder's id already, so
    /// `tv store backfill` leaves them out (a copy re-sent them under its new id: a re-check).
    /// Nil: every flow is this id's. Carried, never compared.
    public var firstFlow: Int64?

    public init(machine: String?, databaseInode: UInt64?, databaseBirth: String? = nil, firstFlow: Int64? = nil) {
        self.machine = machine
        self.databaseInode = databaseInode
        self.databaseBirth = databaseBirth
        self.firstFlow = firstFlow
    }

    /// Why an id is renewed.
    public enum Mismatch: Sendable, Equatable {
        /// The id was made on another machine (or installation): the data folder was copied or
        /// cloned.
        case otherMachine
        /// The id was made for another database file: a copy, a restore, or a new file.
        case otherDatabaseFile
    }

    /// What to do with the id the data folder holds.
    public enum Decision: Sendable, Equatable {
        /// Keep it; the binding file is already right.
        case keep
        /// Keep it and write `binding` (none was kept, or a fact unknown before is known now).
        case record(InstanceBinding)
        /// Make a new id and bind it to `binding`.
        case renew(InstanceBinding, Mismatch)
    }

    /// Compares what the id was bound to (`stored`, nil: never bound, e.g. made by an older tv)
    /// with the facts now. A fact unknown on either side, or a machine told by another kind of
    /// name (a machine id against a host name), cannot differ; an unbound id is kept and bound.
    public static func decide(stored: InstanceBinding?, current: InstanceBinding) -> Decision {
        guard let stored else { return .record(current) }
        if let was = stored.machine, let now = current.machine, kind(was) == kind(now), was != now {
            return .renew(current, .otherMachine)
        }
        if let was = stored.databaseInode, let now = current.databaseInode, was != now {
            return .renew(current, .otherDatabaseFile)
        }
        if let was = stored.databaseBirth, let now = current.databaseBirth, was != now {
            return .renew(current, .otherDatabaseFile)
        }
        let merged = InstanceBinding(machine: current.machine ?? stored.machine, databaseInode: current.databaseInode ?? stored.databaseInode,
                                     databaseBirth: current.databaseBirth ?? stored.databaseBirth, firstFlow: stored.firstFlow)
        return merged == stored ? .keep : .record(merged)
    }

    /// `machine-id:…` or `hostname:…`: the part before the first colon.
    private static func kind(_ machine: String) -> Substring {
        machine.prefix { $0 != ":" }
    }

    /// The file's text: `machine=…`, `database-inode=…`, `database-birth=…` and `first-flow=…`
    /// lines, the unknown left out.
    public var fileText: String {
        var text = ""
        if let machine { text += "machine=\(machine)\n" }
        if let databaseInode { text += "database-inode=\(databaseInode)\n" }
        if let databaseBirth { text += "database-birth=\(databaseBirth)\n" }
        if let firstFlow { text += "first-flow=\(firstFlow)\n" }
        return text
    }

    /// Reads `fileText`; unknown lines are skipped, a malformed value is unknown. Nil when the
    /// text names neither fact.
    public init?(fileText: String) {
        var machine: String?
        var inode: UInt64?
        var birth: String?
        var firstFlow: Int64?
        for line in fileText.split(whereSeparator: \.isNewline) {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let value = String(line[line.index(after: equals)...])
            switch line[..<equals] {
            case "machine": machine = value.isEmpty ? nil : value
            case "database-inode": inode = UInt64(value)
            case "database-birth": birth = value.isEmpty ? nil : value
            case "first-flow": firstFlow = Int64(value)
            default: continue
            }
        }
        guard machine != nil || inode != nil || birth != nil else { return nil }
        self.init(machine: machine, databaseInode: inode, databaseBirth: birth, firstFlow: firstFlow)
    }

    /// The machine fact from `/etc/machine-id`'s text (nil: missing) and the host name: the
    /// machine id when it is 32 hex digits, else the host name.
    public static func machine(machineIDFile: String?, hostName: String) -> String? {
        if let id = machineIDFile?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased(),
           id.utf8.count == 32, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
            return "machine-id:" + id
        }
        return hostName.isEmpty || hostName == "unknown" ? nil : "hostname:" + hostName
    }

    /// The sentence said when an id is renewed.
    public static func renewalSentence(old: String, new: String, _ mismatch: Mismatch) -> String {
        let why: String
        switch mismatch {
        case .otherMachine: why = "was made on another machine (this data folder was copied or cloned)"
        case .otherDatabaseFile: why = "was made for another database file (this data folder is a copy or a restored backup, or its database was made anew)"
        }
        return "This data folder's shared-store instance id \(old) \(why); so that the two never overwrite each other's rows in the shared store, it now writes as instance \(new). Its earlier shared rows stay under \(old)."
    }
}

import Foundation
import TrustStore
import TVHome

/// Where `tv` itself installed a root (`tv ca trust --apply`, `tv setup`): the stores, by the
/// root's SHA-256, kept in `$TV_HOME/trust-installs.json` (0600) so that `tv ca remove --apply`
/// takes the root out of every one of them and lists only what is left to do by hand.
///
/// A value: reading a missing or unreadable file gives an empty record (nothing is known, and the
/// removal then lists every store's steps, as before there was a record).
public struct TrustInstallRecord: Sendable, Equatable, Codable {
    /// One store a root was installed in.
    public struct Entry: Sendable, Equatable, Codable {
        /// The store as `TrustStoreSpec.description` writes it (`system`, `file:/abs`, `nss:/abs`…).
        public let store: String
        /// The root's SHA-256, colon-separated uppercase (`RootDescription.sha256`).
        public let sha256: String

        public init(store: String, sha256: String) {
            self.store = store
            self.sha256 = sha256
        }
    }

    public private(set) var installs: [Entry]

    public init(installs: [Entry] = []) { self.installs = installs }

    /// `$TV_HOME/trust-installs.json`.
    public static func path(_ home: TVHome) -> String { home.path + "/trust-installs.json" }

    /// The record on disk; empty when there is none or it cannot be read.
    public static func read(home: TVHome) -> TrustInstallRecord {
        guard let data = FileManager.default.contents(atPath: path(home)),
              let record = try? JSONDecoder().decode(TrustInstallRecord.self, from: data) else { return TrustInstallRecord() }
        return record
    }

    /// This record with `store` remembered for the root `sha256` (once; relative paths made absolute
    /// against `directory`, so a later command run elsewhere finds the same store).
    public func remembering(_ store: TrustStoreSpec, sha256: String, directory: String) -> TrustInstallRecord {
        let entry = Entry(store: Self.absolute(store, directory: directory).description, sha256: sha256)
        guard !installs.contains(entry) else { return self }
        return TrustInstallRecord(installs: installs + [entry])
    }

    /// This record without `store` for the root `sha256`.
    public func forgetting(_ store: TrustStoreSpec, sha256: String) -> TrustInstallRecord {
        TrustInstallRecord(installs: installs.filter { !($0.sha256 == sha256 && $0.store == store.description) })
    }

    /// The stores the root `sha256` was installed in, in the order they were; entries that no
    /// longer parse are skipped.
    public func stores(for sha256: String) -> [TrustStoreSpec] {
        installs.filter { $0.sha256 == sha256 }.compactMap { try? TrustStoreSpec(parsing: $0.store) }
    }

    /// Writes the record (0600), or deletes the file when it is empty.
    /// - Throws: `FileWriteError`.
    public func write(home: TVHome) throws {
        let file = Self.path(home)
        if installs.isEmpty {
            if unlink(file) != 0 && errno != ENOENT { throw FileWriteError(path: file, reason: String(cString: strerror(errno))) }
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data()
        try FileModes.writeAtomically([UInt8](data), to: file, mode: 0o600)
    }

    /// `store` with a relative path made absolute against `directory`.
    static func absolute(_ store: TrustStoreSpec, directory: String) -> TrustStoreSpec {
        func abs(_ p: String) -> String { p.hasPrefix("/") ? p : (directory as NSString).appendingPathComponent(p) }
        switch store {
        case .system: return .system
        case .file(let p): return .file(abs(p))
        case .dir(let p): return .dir(abs(p))
        case .nss(let p): return .nss(abs(p))
        }
    }
}

extension TrustInstallRecord {
    /// Remembers, on disk, that tv installed the root `sha256` in `store`. Best effort (the root
    /// is installed either way): returns the sentence to say when the record could not be saved.
    public static func remember(_ store: TrustStoreSpec, sha256: String, home: TVHome) -> String? {
        let record = read(home: home).remembering(store, sha256: sha256, directory: FileManager.default.currentDirectoryPath)
        do { try record.write(home: home); return nil } catch let error as FileWriteError {
            return "The root is installed, but tv could not note where (\(error.message)); `tv ca remove --apply` will not know to take it out of \(store.description)."
        } catch {
            return "The root is installed, but tv could not note where (\(error)); `tv ca remove --apply` will not know to take it out of \(store.description)."
        }
    }
}

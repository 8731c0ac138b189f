import CertificateSetup
import Foundation
import LocalCA
import TrustStore
import TVHome

/// Roots `tv ca remake` replaced while tv had them in trust stores (`TrustInstallRecord`): their
/// certificates (public) kept in `$TV_HOME/replaced-roots/<tag>.pem`, so that the next
/// `tv ca trust --apply` to such a store, and `tv ca remove --apply`, take them out of the stores
/// tv put them in. Before, a remade root's predecessor stayed trusted in the system store and NSS
/// after remake, trust and `remove --apply`, the record still listing both and no command taking
/// it out (a trial) — the very root a remake after a suspected key leak must end.
public enum ReplacedRoots {
    /// One replaced root that is still in stores tv put it in.
    public struct Kept: Sendable {
        public let root: Certificate
        public let description: RootDescription
        /// The stores the record lists it in.
        public let stores: [TrustStoreSpec]
    }

    /// What taking replaced roots out of stores did.
    public struct Report: Sendable {
        /// Each root taken out of a store.
        public var takenOut: [(root: RootDescription, store: TrustStoreSpec)] = []
        /// Each root a store still holds, with why it could not be taken out.
        public var failed: [(root: RootDescription, store: TrustStoreSpec, reason: String)] = []
    }

    /// `$TV_HOME/replaced-roots` (0700).
    public static func folder(_ home: TVHome) -> String { home.path + "/replaced-roots" }

    /// Keeps `root`, just replaced, when the record lists a store it is in (nothing otherwise).
    /// - Returns: the stores it is in (empty: not kept).
    /// - Throws: `FileWriteError`, `TVHomeError` when the copy cannot be written.
    @discardableResult
    public static func keep(_ root: Certificate, home: TVHome) throws -> [TrustStoreSpec] {
        let description = RootDescription(root: root, path: "")
        let stores = TrustInstallRecord.read(home: home).stores(for: description.sha256)
        guard !stores.isEmpty else { return [] }
        var isDir: ObjCBool = false
        if !FileManager.default.fileExists(atPath: folder(home), isDirectory: &isDir) {
            try FileModes.makeDirectory(folder(home), mode: 0o700)
        }
        try FileModes.writeAtomically(root.pem, to: path(home, description), mode: 0o644)
        return stores
    }

    /// The replaced roots kept, each with the stores the record lists it in (only `store` when
    /// given); a kept root the record no longer lists anywhere is not returned.
    public static func kept(home: TVHome, in store: TrustStoreSpec? = nil) -> [Kept] {
        let record = TrustInstallRecord.read(home: home)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder(home))) ?? []).filter { $0.hasSuffix(".pem") }.sorted()
        return names.compactMap { name in
            let file = folder(home) + "/" + name
            guard let bytes = FileManager.default.contents(atPath: file), let root = try? Certificate.fromPEM([UInt8](bytes)) else { return nil }
            let description = RootDescription(root: root, path: file)
            let stores = record.stores(for: description.sha256).filter { store == nil || $0 == store }
            return stores.isEmpty ? nil : Kept(root: root, description: description, stores: stores)
        }
    }

    /// Takes each kept replaced root out of the stores the record lists it in (only `store` when
    /// given; never the current root), with the steps `TrustInstaller.removalActions` gives for
    /// the store on this machine; what came out is forgotten, and a root out of every store is
    /// no longer kept.
    /// - Parameter announce: each step's sentence, just before it runs.
    public static func takeOut(home: TVHome, from store: TrustStoreSpec? = nil, current: RootDescription?,
                               environment: [String: String], announce: (String) -> Void = { _ in }) -> Report {
        var report = Report()
        for kept in kept(home: home, in: store) where kept.description.sha256 != current?.sha256 {
            for each in kept.stores {
                let target = TrustTarget.forStore(each, distribution: OSRelease.distribution())
                guard let actions = TrustInstaller.removalActions(target, root: kept.description) else {
                    report.failed.append((kept.description, each, "tv cannot do the steps for that store here"))
                    continue
                }
                do {
                    try TrustInstaller.perform(actions, root: kept.root, rootPath: kept.description.path, environment: environment, announce: announce)
                    report.takenOut.append((kept.description, each))
                    try? TrustInstallRecord.read(home: home).forgetting(each, sha256: kept.description.sha256).write(home: home)
                } catch {
                    report.failed.append((kept.description, each, (error as? UserFacingError)?.message ?? "\(error)"))
                }
            }
            if TrustInstallRecord.read(home: home).stores(for: kept.description.sha256).isEmpty {
                unlink(kept.description.path)
            }
        }
        rmdir(folder(home))  // only when empty
        return report
    }

    private static func path(_ home: TVHome, _ root: RootDescription) -> String {
        folder(home) + "/tunnelvision-\(root.tag).pem"
    }
}

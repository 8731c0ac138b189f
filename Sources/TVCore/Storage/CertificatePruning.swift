import FlowStore

/// Prunes `certificates` rows no flow's `chain` names any more (issue 23), after retention or
/// delete-everything deleted flows. Retention spares rows whose DER reached the writer within the
/// last `grace` (a running loop may still believe the writer holds it: `SentCertificates`);
/// delete-everything prunes every unreferenced row (it then tells this process's loops to forget,
/// `ServerCertificateMemory.forgetAll`).
enum CertificatePruning {
    /// An hour, in µs: twice the time a loop remembers a DER it sent.
    static let grace: Int64 = 3_600_000_000

    /// The fingerprints among `candidates` that none of `chains` (flows' `chain` texts:
    /// fingerprints, space-separated) names, in `candidates`' order. Pure.
    static func orphans(candidates: [String], chains: [String]) -> [String] {
        var named = Set<Substring>()
        for chain in chains { for fingerprint in chain.split(separator: " ") { named.insert(fingerprint) } }
        return candidates.filter { !named.contains(Substring($0)) }
    }

    /// Deletes the unreferenced rows stored before `storedBefore` (µs; nil: whenever), in one
    /// transaction: one read of the distinct chains, one of the candidates.
    /// - Returns: rows deleted.
    /// - Throws: `FlowStoreError` from SQLite.
    static func prune(_ database: SQLiteDatabase, storedBefore: Int64?) throws -> Int {
        try database.transaction { () -> Int in
            var candidates: [String] = []
            let select = try database.prepare(storedBefore == nil ? "SELECT sha256 FROM certificates"
                                                                  : "SELECT sha256 FROM certificates WHERE stored_at < ?")
            if let storedBefore { try select.bind([.integer(storedBefore)]) }
            try select.forEachRow { if let sha256 = $0.string(at: 0) { candidates.append(sha256) } }
            guard !candidates.isEmpty else { return 0 }
            var chains: [String] = []
            let named = try database.prepare("SELECT DISTINCT chain FROM flows WHERE chain <> ''")
            try named.forEachRow { if let chain = $0.string(at: 0) { chains.append(chain) } }
            let delete = try database.prepare("DELETE FROM certificates WHERE sha256 = ?")
            var deleted = 0
            for sha256 in orphans(candidates: candidates, chains: chains) {
                try delete.bind([.text(sha256)])
                _ = try delete.step()
                delete.reset()
                deleted += database.changes
            }
            return deleted
        }
    }
}

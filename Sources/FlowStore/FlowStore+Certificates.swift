import FlowTerms

/// Reading the `certificates` table (server certificates the flow writer stored once each from
/// `FlowRecord.newCertificates`; flows name them in `FlowRecord.certificateChain`).
extension FlowStore {
    /// The stored DER of each of `fingerprints` (SHA-256, lowercase hex) that the table holds,
    /// by fingerprint; a fingerprint whose DER never reached the writer (a dropped batch) is absent.
    /// - Throws: `FlowStoreError` when the file cannot be read.
    public func certificates(_ fingerprints: Set<String>) throws -> [String: [UInt8]] {
        guard !fingerprints.isEmpty else { return [:] }
        return try connection.withDatabase { database in
            let statement = try database.prepare("SELECT der FROM certificates WHERE sha256 = ?")
            var found: [String: [UInt8]] = [:]
            for sha256 in fingerprints {
                defer { statement.reset() }
                try statement.bind([.text(sha256)])
                if try statement.step(), case let .blob(der) = statement.value(at: 0) { found[sha256] = der }
            }
            return found
        }
    }
}

import Foundation
import TVHome

/// The fixed identity of the `.mobileconfig` this `$TV_HOME` exports.
///
/// iOS replaces an installed profile whose top-level `PayloadIdentifier` equals the new one's,
/// instead of adding a second (Apple device-management TopLevel.yaml; notes/specs.md §1); so the
/// identity is drawn once, kept in `ca/profile-identity.json`, and survives remaking the CA.
public struct ProfileIdentity: Sendable, Equatable, Codable {
    /// Top-level `PayloadIdentifier`, e.g. `org.tunnelvision.ca.3F2A…`.
    public let profileIdentifier: String
    /// Top-level `PayloadUUID` (uppercase RFC 4122 text).
    public let profileUUID: String
    /// The root payload's `PayloadIdentifier`.
    public let rootPayloadIdentifier: String

    /// A fresh identity with a random UUID.
    public static func fresh() -> ProfileIdentity {
        let uuid = UUID().uuidString
        return ProfileIdentity(profileIdentifier: "org.tunnelvision.ca.\(uuid)",
                               profileUUID: uuid,
                               rootPayloadIdentifier: "org.tunnelvision.ca.\(uuid).root")
    }

    /// Reads the identity file, or writes a fresh one (0644) when there is none.
    /// - Throws: `CAError.unreadableFile` when the file exists but is not a valid identity;
    ///   `FileWriteError` when a new one cannot be written.
    public static func loadOrCreate(path: String) throws -> ProfileIdentity {
        if FileManager.default.fileExists(atPath: path) {
            guard let data = FileManager.default.contents(atPath: path),
                  let identity = try? JSONDecoder().decode(ProfileIdentity.self, from: data) else {
                throw CAError.unreadableFile(path: path, reason: "it is not a profile identity; remove it to draw a new one (installed profiles will then stack instead of being replaced)")
            }
            return identity
        }
        let identity = fresh()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(identity)
        try FileModes.writeAtomically([UInt8](data) + [0x0A], to: path, mode: 0o644)
        return identity
    }
}

import TVHome

/// What `tv ca status` says about the CA, as a value: the lines for people and the JSON object.
///
/// Built from a `CAState` read now; never prints or holds the key.
public struct CAStatusReport: Sendable, Equatable {
    public enum State: String, Sendable { case present, absent, doubt }

    public let state: State
    public let directory: String
    /// Present only: facts of the root.
    public let subject: String?
    public let keyType: String?
    public let leafKeyType: String?
    public let notBefore: Int64?
    public let notAfter: Int64?
    public let serialHex: String?
    public let sha256: String?
    public let sha1: String?
    public let rootPath: String?
    /// Doubt only: the file and the problem.
    public let problem: String?
    public let problemPath: String?

    public init(state: CAState, folder: CAFolder) {
        directory = folder.directory
        switch state {
        case .absent:
            self.state = .absent
            subject = nil; keyType = nil; leafKeyType = nil; notBefore = nil; notAfter = nil
            serialHex = nil; sha256 = nil; sha1 = nil; rootPath = nil; problem = nil; problemPath = nil
        case .doubt(let doubt):
            self.state = .doubt
            subject = nil; keyType = nil; leafKeyType = nil; notBefore = nil; notAfter = nil
            serialHex = nil; sha256 = nil; sha1 = nil; rootPath = nil
            problem = doubt.problem; problemPath = doubt.path
        case .present(let ca):
            self.state = .present
            subject = ca.root.subject
            keyType = ca.root.publicKeyDescription
            leafKeyType = ca.leafKey.typeDescription
            notBefore = ca.root.notBefore
            notAfter = ca.root.notAfter
            serialHex = ca.root.serialHex
            sha256 = Hex.encode(ca.root.sha256, separator: ":", uppercase: true)
            sha1 = Hex.encode(ca.root.sha1, separator: ":", uppercase: true)
            rootPath = folder.rootPath
            problem = nil; problemPath = nil
        }
    }

    /// Lines for a terminal; `now` (seconds) decides "expired"/"valid".
    public func lines(now: Int64) -> [String] {
        switch state {
        case .absent:
            return ["CA: none yet (\(directory))",
                    "Next: `tv ca create` makes one, or `tv ca import --cert FILE --key FILE` brings your own."]
        case .doubt:
            return ["CA: in doubt — \(problemPath ?? directory) \(problem ?? "")",
                    "Nothing will be generated over it. Repair or restore that file, or, to start over on purpose, \(CADoubt.startOver(doubtPath: problemPath ?? directory))."]
        case .present:
            var validity = "\(Timestamp.utc(notBefore!)) to \(Timestamp.utc(notAfter!))"
            if now >= notAfter! { validity += " (EXPIRED)" } else if now < notBefore! { validity += " (not yet valid)" }
            // A root that cannot sign is the setup stage's to say (`CAFact.cannotSign`).
            var next: [String] = []
            if rootProblem(now: now) == nil && notAfter! - now < 30 * 86_400 {
                next = ["Next: it expires in \((notAfter! - now) / 86_400) days; then nothing can be inspected with it: make a new one with `tv ca remake` before then."]
            }
            return presentLines(validity: validity) + next
        }
    }

    /// Why the root cannot sign at `now`; nil when it can (or there is no root).
    public func rootProblem(now: Int64) -> CARootProblem? {
        guard state == .present, let notBefore, let notAfter else { return nil }
        return CARootProblem.at(now, notBefore: notBefore, notAfter: notAfter)
    }

    private func presentLines(validity: String) -> [String] {
        [
            "CA: present",
            "  subject      \(subject!)",
            "  key          \(keyType!) (leaf key \(leafKeyType!))",
            "  valid        \(validity)",
            "  serial       \(serialHex!)",
            "  SHA-256      \(sha256!)",
            "  SHA-1        \(sha1!)",
            "  certificate  \(rootPath!)",
            "  folder       \(directory) (the keys stay here; they are never printed)",
        ]
    }

    /// The JSON object for `--json`, as ordered key/value pairs (strings, numbers or null).
    public func jsonFields() -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = [("state", .string(state.rawValue)), ("directory", .string(directory))]
        switch state {
        case .absent: break
        case .doubt:
            out += [("problemPath", .string(problemPath ?? "")), ("problem", .string(problem ?? ""))]
        case .present:
            out += [("subject", .string(subject!)), ("keyType", .string(keyType!)), ("leafKeyType", .string(leafKeyType!)),
                    ("notBefore", .string(Timestamp.iso8601(notBefore!))), ("notAfter", .string(Timestamp.iso8601(notAfter!))),
                    ("serial", .string(serialHex!)), ("sha256", .string(sha256!)), ("sha1", .string(sha1!)),
                    ("certificate", .string(rootPath!))]
        }
        return out
    }
}

import CertificateSetup
import LocalCA
import TrustStore
import TVHome

/// Every fact the stage is derived from, read now: the CA folder, then (when there is a CA) the
/// trust store's two answers.
public struct SetupSnapshot: Sendable {
    public let caState: CAState
    public let store: TrustStoreSpec
    /// The store's answers; nil when there was no usable CA to ask about.
    public let trust: TrustFacts?
    public let facts: SetupFacts

    /// Reads the CA and asks `store`, now.
    /// - Parameters:
    ///   - inspectionEnabled: the saved setting, carried into the facts.
    ///   - now: seconds since 1970-01-01 UTC (for the test leaf).
    public static func read(home: TVHome, store: TrustStoreSpec, inspectionEnabled: Bool,
                            environment: [String: String], now: Int64) -> SetupSnapshot {
        let caState = CAFolder(home: home).load()
        var trust: TrustFacts?
        // A root that cannot sign makes no test leaf: the store is not asked.
        if case .present(let ca) = caState, ca.rootProblem(now: now) == nil {
            trust = TrustQuestions.ask(store, about: ca, now: now, environment: environment)
        }
        let facts = SetupFacts(ca: caFact(caState, now: now), store: store, trust: trust, inspectionEnabled: inspectionEnabled)
        return SetupSnapshot(caState: caState, store: store, trust: trust, facts: facts)
    }

    /// The same snapshot with another saved inspection setting.
    public func with(inspectionEnabled: Bool) -> SetupSnapshot {
        var facts = self.facts
        facts.inspectionEnabled = inspectionEnabled
        return SetupSnapshot(caState: caState, store: store, trust: trust, facts: facts)
    }

    /// The stage machine's view of a CA state at `now` (seconds since 1970).
    public static func caFact(_ state: CAState, now: Int64) -> CAFact {
        switch state {
        case .absent: return .absent
        case .present(let ca):
            guard let problem = ca.rootProblem(now: now) else { return .present }
            return .cannotSign(reason: problem.clause, remedy: problem.remedy)
        case .doubt(let doubt): return .doubt(reason: "\(doubt.path) \(doubt.problem)")
        }
    }

    /// The CA, when present.
    public var authority: CertificateAuthority? {
        if case .present(let ca) = caState { return ca }
        return nil
    }

    /// The sentence saying that reading the CA made a new leaf key (`LeafKeyRemade`), for the
    /// command to say once; nil when it did not.
    public var leafKeyNotice: String? { authority?.leafKeyRemade?.sentence }
}

extension RootDescription {
    /// How the steps name `ca`'s root, kept at `folder.rootPath`.
    public init(_ ca: CertificateAuthority, folder: CAFolder) {
        self.init(root: ca.root, path: folder.rootPath)
    }

    /// How the steps name `root`, whose PEM is (or was) at `path`.
    public init(root: Certificate, path: String) {
        self.init(path: path, commonName: root.commonName ?? root.subject,
                  tag: Hex.encode(Array(root.sha256.prefix(4))),
                  sha256: Hex.encode(root.sha256, separator: ":", uppercase: true))
    }
}

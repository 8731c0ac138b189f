import CertificateSetup
import TrustStore
import TVHome

/// How `tv ca trust --doctor` prints its rows: for people, one block per place; for programs, JSON.
public enum TrustDoctorPresentation {
    /// The lines for people, after the "Root:" line the command prints.
    public static func lines(_ rows: [TrustDoctorRow]) -> [String] {
        var out: [String] = []
        for row in rows {
            let program = row.program.map { " — \($0)" } ?? ""
            out.append("\(row.name)\(program)")
            out.append("  store    \(row.store)")
            out.append("  trusted  \(row.trusted.word): \(row.reason)")
            if let fix = row.fix { out.append("  fix      \(fix)") }
            let exec: String
            switch row.execProxy {
            case .covers(let s): exec = "avoids the need: \(s)"
            case .partly(let s): exec = "partly: \(s)"
            case .no(let s): exec = "does not help: \(s)"
            }
            out.append("  tv exec --proxy  \(exec)")
        }
        let untrusted = rows.filter { $0.trusted != .yes }.count
        out.append(untrusted == 0 ? "Every place found trusts tv's root."
                   : "\(untrusted) of \(rows.count) places found do not trust tv's root now; run a fix above, or run the program with `tv exec --proxy -- CMD` (nothing changes outside the data folder).")
        if untrusted > 0 { out.append(TrustGuides.forgetLacksRootStep) }
        return out.map(TerminalText.line)
    }

    /// `{"root": {...}, "places": [...]}`.
    public static func json(_ rows: [TrustDoctorRow], root: RootDescription) -> JSONValue {
        .object([
            ("root", .object([("path", .string(root.path)), ("commonName", .string(root.commonName)), ("sha256", .string(root.sha256))])),
            ("places", .array(rows.map { row in
                var because: JSONValue = .null
                if case .unknown(let b) = row.trusted { because = .string(b) }
                return .object([
                    ("kind", .string(row.kind)),
                    ("name", .string(row.name)),
                    ("program", row.program.map(JSONValue.string) ?? .null),
                    ("store", .string(row.store)),
                    ("trusted", .string(row.trusted.word)),
                    ("trustedBecause", because),
                    ("reason", .string(row.reason)),
                    ("fix", row.fix.map(JSONValue.string) ?? .null),
                    ("execProxy", .string(row.execProxy.word)),
                    ("execProxyNote", .string(row.execProxy.sentence)),
                ])
            })),
        ])
    }
}

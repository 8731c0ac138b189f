import CertificateSetup
import SetupActions
import TrustStore
import TVCore

/// `tv ca trust --doctor [--json]`: every place on this machine that reads roots, asked now
/// (`TrustDoctorReading`), decided (`TrustDoctor`) and printed (`TrustDoctorPresentation`).
/// Changes nothing.
enum CATrustDoctorCommand {
    static func run(_ inv: Invocation) throws -> Int32 {
        for flag in ["apply", "platform", "trust-store"] where inv.command.has(flag) {
            throw UsageRefusal("--doctor asks every place it finds and changes nothing; it does not take --\(flag).")
        }
        let (ca, folder) = try CACommands.loadPresent(inv)
        let root = RootDescription(ca, folder: folder)
        let found = TrustDoctorReading.read(ca: ca, environment: inv.environment, now: inv.now)
        let rows = TrustDoctor.rows(found.places, root: root, system: found.system, distribution: OSRelease.distribution(),
                                    systemBundles: found.systemBundles)
        if inv.json {
            inv.console.line(TrustDoctorPresentation.json(rows, root: root).serialized(pretty: true))
            return 0
        }
        inv.console.line("Root: \(root.commonName)  SHA-256 \(root.sha256)  (\(root.path))")
        for line in TrustDoctorPresentation.lines(rows) { inv.console.line(line) }
        return 0
    }
}

import CertificateSetup
import Testing
import TrustStore

/// "Inspection must turn itself off" and "inspect on", over every combination of facts.
struct InspectionPolicyTests {
    @Test func inspectionActionOverEveryCombination() {
        for (ca, installed, usable, store, on) in StageMachineTests.combinations {
            let facts = SetupFacts(ca: ca, store: store, installed: installed, usable: usable, inspectionEnabled: on)
            let action = CertificateSetupPolicy.inspectionAction(facts)
            let name = StageMachineTests.names[store.description]!
            let opt = StageMachineTests.options[store.description]!
            let expected: InspectionAction
            if !on { expected = .leaveAsIs }
            else {
                switch (ca, usable) {
                case (.absent, _):
                    expected = .turnOff(TurnOffReason(why: "there is no CA any more, so nothing can be inspected", advice: "`tv setup` starts again."))
                case (.doubt(let r), _):
                    expected = .turnOff(TurnOffReason(why: "the CA is in doubt (\(r))", advice: "Repair the CA, then `tv setup`."))
                case (.cannotSign(let r, _), _):
                    expected = .turnOff(TurnOffReason(why: "the CA cannot sign (\(r))",
                                                      advice: "Make a new one with `tv ca remake` (devices that trusted the old root must be given the new one)."))
                case (.present, .yes):
                    expected = .leaveAsIs
                case (.present, .no):
                    expected = .turnOff(TurnOffReason(why: "\(name) no longer accepts leaves from the root for TLS, so connections would fail",
                                                      advice: "`tv setup\(opt)` shows how to trust it again."))
                case (.present, .unknown):
                    expected = .keepWithWarning("Inspection stays on, but \(name) cannot be read (/s cannot be read), so it is not known whether the root is still trusted; `tv inspect off` turns it off.")
                }
            }
            #expect(action == expected, "ca=\(ca) installed=\(installed) usable=\(usable) store=\(store) on=\(on)")
        }
    }

    @Test func turnOffSentences() {
        let reason = TurnOffReason(why: "the bundle /b no longer accepts leaves from the root for TLS, so connections would fail",
                                   advice: "`tv setup --trust-store file:/b` shows how to trust it again.")
        #expect(reason.savedSentence == "Inspection was on, but the bundle /b no longer accepts leaves from the root for TLS, so connections would fail; it is now off. `tv setup --trust-store file:/b` shows how to trust it again.")
        #expect(reason.unsavedSentence("Could not save.") == "Inspection is on, but the bundle /b no longer accepts leaves from the root for TLS, so connections would fail; it must be turned off, and that could not be saved: Could not save.")
    }

    @Test func inspectOnOverEveryCombination() {
        for (ca, installed, usable, store, on) in StageMachineTests.combinations {
            let facts = SetupFacts(ca: ca, store: store, installed: installed, usable: usable, inspectionEnabled: on)
            let stage = CertificateSetupPolicy.stage(facts)
            let decision = CertificateSetupPolicy.inspectOn(facts)
            switch stage.step {
            case .ready: #expect(decision == .turnOn)
            case .inspecting: #expect(decision == .alreadyOn)
            default:
                #expect(decision == .refuse("Inspection stays off. \(stage.meaning) Next: \(stage.nextStep) (`\(stage.nextCommand!)`)"))
            }
        }
    }

    @Test func inspectOnRefusalNamesTheNSSMissingStep() {
        let facts = SetupFacts(ca: .present, store: .nss("/n"), installed: .yes, usable: .no,
                               finding: .nssNotTrustedForTLS(nickname: "R", trust: "c,,"), inspectionEnabled: false)
        guard case .refuse(let sentence) = CertificateSetupPolicy.inspectOn(facts) else {
            Issue.record("inspect on was not refused"); return
        }
        #expect(sentence.contains("`certutil -M -d sql:/n -n R -t C,,`"))
    }
}

/// The missing step for each finding the trust check can report with the root installed.
struct MissingStepTests {
    @Test(arguments: [
        (TrustStoreSpec.file("/b"), TrustFinding.untrustedForTLS,
         "In /b the root is a TRUSTED CERTIFICATE entry whose trust settings allow other uses only, not TLS servers. Replace that entry with the plain certificate: `tv ca trust --trust-store file:/b --apply --yes` does it."),
        (TrustStoreSpec.dir("/d"), TrustFinding.rejectedForTLS,
         "In /d the root is a TRUSTED CERTIFICATE file whose trust settings reject TLS servers (serverAuth). Replace it with the plain certificate and rehash the folder: `tv ca trust --trust-store dir:/d --apply --yes` does both."),
        (TrustStoreSpec.system, TrustFinding.notHashed(hash: "abcdef01"),
         "The root's file is in the system certificate folder, but no hash link (abcdef01.0) leads to it. Rebuild the links: `sudo update-ca-certificates` (Debian/Ubuntu) or `sudo update-ca-trust` (Fedora, Arch)."),
        (TrustStoreSpec.file("/b"), TrustFinding.verifyFailed(code: 10, text: "certificate has expired"),
         "OpenSSL refuses a leaf from it (certificate has expired). If the root has expired or is not yet valid, check the clock, or make a new one with `tv ca remake --yes` and trust that."),
        (TrustStoreSpec.dir("/d"), TrustFinding.rootCannotAnchor(code: 30, text: "authority and subject key identifier mismatch"),
         "OpenSSL cannot use tv's root as its own anchor (authority and subject key identifier mismatch), so no trust store or hash link will make it trusted. Make a new one with `tv ca remake --yes`, or import a root that `openssl verify -CAfile ROOT ROOT` accepts, and trust that."),
        (TrustStoreSpec.nss("/n"), TrustFinding.issuerNotFound,
         "A leaf from it does not verify for TLS servers. Install it again as a plain certificate: `tv ca trust --trust-store nss:/n` shows how."),
        (TrustStoreSpec.file("/my bundle.pem"), TrustFinding.rejectedForTLS,
         "In /my bundle.pem the root is a TRUSTED CERTIFICATE entry whose trust settings reject TLS servers (serverAuth). Replace that entry with the plain certificate: `tv ca trust --trust-store 'file:/my bundle.pem' --apply --yes` does it."),
    ])
    func missingStep(store: TrustStoreSpec, finding: TrustFinding, expected: String) {
        #expect(CertificateSetupPolicy.missingStep(store: store, finding: finding) == expected)
    }
}

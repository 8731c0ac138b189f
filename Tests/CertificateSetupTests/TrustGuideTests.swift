import CertificateSetup
import SetupActions
import Testing
import TrustStore
import TVHome

struct TrustGuideTests {
    let root = RootDescription(path: "/h/ca/root.pem", commonName: "TunnelVision Root CA 1a2b3c4d", tag: "9f86d081",
                               sha256: "9F:86")

    @Test func debianStepsNameTheExactFileAndCommand() {
        #expect(TrustGuides.install(.debian, root: root).steps == [
            "sudo cp /h/ca/root.pem /usr/local/share/ca-certificates/tunnelvision-9f86d081.crt",
            "sudo update-ca-certificates",
            TrustGuides.forgetLacksRootStep,
        ])
        #expect(TrustGuides.removal(.debian, root: root).steps == [
            "sudo rm /usr/local/share/ca-certificates/tunnelvision-9f86d081.crt",
            "sudo update-ca-certificates --fresh",
            "echo -/etc/ssl/certs/tunnelvision-9f86d081.pem | sudo run-parts --stdin /etc/ca-certificates/update.d   (Java's cacerts: update-ca-certificates does not tell it)",
        ])
        #expect(TrustInstaller.removalActions(.debian, root: root) == [
            .delete("/usr/local/share/ca-certificates/tunnelvision-9f86d081.crt"),
            .run(program: "update-ca-certificates", arguments: ["--fresh"]),
            .tellHooksRemoved(pem: "/etc/ssl/certs/tunnelvision-9f86d081.pem"),
        ])
        #expect(TrustInstaller.removalActions(.debian, root: root)?.last?.sentence
                == "tell the hooks in /etc/ca-certificates/update.d (Java's cacerts) that /etc/ssl/certs/tunnelvision-9f86d081.pem is gone, which update-ca-certificates does not")
    }

    @Test("Windows steps quote the common name with double quotes, as cmd.exe reads them")
    func windowsQuotesForCmd() {
        #expect(TrustGuides.removal(.windows, root: root).steps == [
            "In an administrator prompt: certutil -delstore Root \"TunnelVision Root CA 1a2b3c4d\"   (or certmgr.msc → Trusted Root Certification Authorities → delete it).",
        ])
        #expect(TrustGuides.install(.windows, root: root).steps[1]
                == "In an administrator prompt: certutil -addstore -f Root tv.cer   (or double-click it → Install Certificate → Local Machine → Trusted Root Certification Authorities).")
        #expect(WindowsWord.quote("tv.cer") == "tv.cer")
        #expect(WindowsWord.quote("a&b") == "\"a&b\"")
        #expect(WindowsWord.quote("say \"hi\"") == "\"say hi\"")
    }

    @Test("the system-store note names the NSS option of the command that prints it")
    func nssNoteNamesEachCommandsOption() {
        #expect(TrustGuides.install(.debian, root: root).note
                == "OpenSSL, curl, wget, Python's ssl module (urllib), Go programs and the distribution's own Java (its cacerts is made from this store) then trust it; Python requests (certifi), Node.js and a JDK installed by hand keep their own lists (`tv ca trust --platform python`, `node` or `java` prints what each needs); Firefox and Chromium use their own NSS database (`--platform nss`).")
        #expect(TrustGuides.install(.debian, root: root, for: .setup).note
                == "OpenSSL, curl, wget, Python's ssl module (urllib), Go programs and the distribution's own Java (its cacerts is made from this store) then trust it; Python requests (certifi), Node.js and a JDK installed by hand keep their own lists (`tv ca trust --platform python`, `node` or `java` prints what each needs); Firefox and Chromium use their own NSS database (`--trust-store nss:DIR`).")
    }

    @Test func fedoraAndNSSSteps() {
        #expect(TrustGuides.install(.fedora, root: root).steps[0] == "sudo cp /h/ca/root.pem /etc/pki/ca-trust/source/anchors/tunnelvision-9f86d081.pem")
        #expect(TrustGuides.install(.nss(directory: "/n"), root: root).steps[0]
                == "certutil -A -d sql:/n -n 'TunnelVision Root CA 1a2b3c4d' -t C,, -a -i /h/ca/root.pem   (installs it AND trusts it to identify websites)")
        #expect(TrustGuides.install(.nss(directory: nil), root: root).steps[0].hasPrefix("certutil -A -d sql:\"$HOME/.pki/nssdb\" "))
        #expect(TrustGuides.removal(.nss(directory: "/n"), root: root).steps[0] == "certutil -D -d sql:/n -n 'TunnelVision Root CA 1a2b3c4d'")
        // A folder with no database yet: how to make one by hand, and that --apply does it.
        #expect(TrustGuides.install(.nss(directory: "/n"), root: root).note
                == "The trust flag C is the separate, deliberate step: stored with ',,' the root is known but not trusted. A folder with no database yet (no cert9.db; Chromium makes $HOME/.pki/nssdb on its first start) needs one first: `mkdir -p -m 700 /n && certutil -N -d sql:/n --empty-password` (`tv ca trust --trust-store nss:DIR --apply` does it). Restart the browser afterwards.")
        #expect(TrustGuides.install(.nss(directory: nil), root: root).note?.contains("`mkdir -p -m 700 \"$HOME/.pki/nssdb\" && certutil -N -d sql:\"$HOME/.pki/nssdb\" --empty-password`") == true)
    }

    @Test("every install guide ends with forgetting the clients remembered as lacking the root; no removal guide does")
    func everyPlatformHasInstallAndRemovalSteps() {
        for target in TrustTarget.platformNames.map({ TrustTarget(platform: $0, store: .system)! }) + [.bundle("/b.pem"), .folder("/f"), .nss(directory: "/n")] {
            let install = TrustGuides.install(target, root: root).steps
            #expect(install.count >= 2, "\(target)")
            #expect(install.last == TrustGuides.forgetLacksRootStep, "\(target)")
            #expect(install.filter { $0.contains("tv pinned forget") }.count == 1, "\(target)")
            #expect(!TrustGuides.removal(target, root: root).steps.isEmpty)
            #expect(!TrustGuides.removal(target, root: root).steps.contains { $0.contains("tv pinned forget") })
        }
        #expect(TrustGuides.forgetLacksRootStep
                == "Then `tv pinned forget --lacks-root`: a program that connected through tv before it trusted the root was remembered as lacking it, and its connections pass through untouched until then.")
        #expect(TrustTarget(platform: "plan9", store: .system) == nil)
        #expect(TrustTarget(platform: "nss", store: .nss("/n")) == .nss(directory: "/n"))
    }

    @Test func applyIsOfferedOnlyForLinuxStores() {
        let applicable: [TrustTarget] = [.debian, .fedora, .arch, .nss(directory: "/n"), .bundle("/b"), .folder("/d")]
        let manual: [TrustTarget] = [.nss(directory: nil), .macos, .ios, .android, .windows]
        #expect(applicable.map(\.canApply) == Array(repeating: true, count: 6))
        #expect(manual.map(\.canApply) == Array(repeating: false, count: 5))
    }

    @Test func storesMapToTheirTargets() {
        #expect(TrustTarget.forStore(.system, distribution: .fedora) == .fedora)
        #expect(TrustTarget.forStore(.system, distribution: nil) == .debian)
        #expect(TrustTarget.forStore(.file("/b"), distribution: .arch) == .bundle("/b"))
        #expect(TrustTarget.forStore(.nss("/n"), distribution: .debian) == .nss(directory: "/n"))
    }

    @Test func osReleaseFamilies() {
        #expect(LinuxDistribution.from(osRelease: "PRETTY_NAME=\"Debian GNU/Linux 12\"\nID=debian\n") == .debian)
        #expect(LinuxDistribution.from(osRelease: "ID=ubuntu\nID_LIKE=debian\n") == .debian)
        #expect(LinuxDistribution.from(osRelease: "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n") == .fedora)
        #expect(LinuxDistribution.from(osRelease: "ID=manjaro\nID_LIKE=arch\n") == .arch)
        #expect(LinuxDistribution.from(osRelease: "ID=alpine\n") == nil)
    }

    @Test func shellQuoting() {
        #expect(ShellWord.quote("/a/b.pem") == "/a/b.pem")
        #expect(ShellWord.quote("a b") == "'a b'")
        #expect(ShellWord.quote("it's") == "'it'\\''s'")
        #expect(StoreWords.option(.system) == "")
        #expect(StoreWords.option(.dir("/x y")) == " --trust-store 'dir:/x y'")
    }
}

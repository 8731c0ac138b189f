import Testing
@testable import CertificateSetup
@testable import SetupActions
import TrustStore

/// `tv ca trust --doctor`'s decision: facts in, rows out, exact values; and its small readers.
@Suite struct TrustDoctorTests {
    let root = RootDescription(path: "/h/ca/root.pem", commonName: "TunnelVision Root CA 1a2b3c4d", tag: "9f86d081", sha256: "9F:86")
    let systemFix = "sudo cp /h/ca/root.pem /usr/local/share/ca-certificates/tunnelvision-9f86d081.crt && sudo update-ca-certificates"

    @Test("system store not trusting; a Firefox profile with the root stored ',,'; Java cacerts read-only; certifi; node; go and curl reading the system store")
    func untrustedEverywhere() {
        let places: [TrustPlaceFacts] = [
            .system(TrustFacts(store: .system, installed: .no, usable: .no, finding: .issuerNotFound), location: "/usr/lib/ssl/cert.pem, /usr/lib/ssl/certs"),
            .nss(browser: "Firefox profile ab.default", TrustFacts(store: .nss("/h/.mozilla/firefox/ab.default"), installed: .yes, usable: .no,
                                                                     finding: .nssNotTrustedForTLS(nickname: "TunnelVision Root CA 1a2b3c4d", trust: ",,"))),
            .java(program: "/usr/bin/java", version: "17.0.15", keystore: "/usr/lib/jvm/j/lib/security/cacerts", namedBy: nil, trusts: .no, writable: false),
            .python(program: "/v/bin/python3", version: "3.11.2", certifi: "/v/certifi/cacert.pem", certifiTrusts: .no, named: nil),
            .node(program: "/usr/bin/node", version: "v20.20.2", builtInTrusts: .no, extra: nil, readsSystemStore: false),
            .go(program: "/usr/bin/go", version: "1.19.8", named: nil),
            .curl(program: "/usr/bin/curl", version: "7.88.1", named: nil),
        ]
        let rows = TrustDoctor.rows(places, root: root, system: .no, distribution: .debian)
        #expect(rows == [
            TrustDoctorRow(kind: "system", name: "OpenSSL system store", program: nil, store: "/usr/lib/ssl/cert.pem, /usr/lib/ssl/certs", trusted: .no,
                           reason: FindingWords.sentence(.issuerNotFound), fix: systemFix,
                           execProxy: .covers("SSL_CERT_FILE names a bundle with tv's root for OpenSSL programs (curl, Python's ssl, Go)")),
            TrustDoctorRow(kind: "nss", name: "Firefox profile ab.default", program: nil, store: "/h/.mozilla/firefox/ab.default", trusted: .no,
                           reason: FindingWords.sentence(.nssNotTrustedForTLS(nickname: "TunnelVision Root CA 1a2b3c4d", trust: ",,")),
                           fix: "certutil -M -d sql:/h/.mozilla/firefox/ab.default -n 'TunnelVision Root CA 1a2b3c4d' -t C,,   (then restart the browser)",
                           execProxy: .no("a browser trusts only its own NSS database and takes its proxy from its own settings")),
            TrustDoctorRow(kind: "java", name: "Java 17.0.15", program: "/usr/bin/java", store: "/usr/lib/jvm/j/lib/security/cacerts", trusted: .no,
                           reason: "tv's root is not an entry of the JDK's cacerts",
                           fix: "sudo keytool -importcert -keystore /usr/lib/jvm/j/lib/security/cacerts -storepass changeit -alias tunnelvision -file /h/ca/root.pem -noprompt",
                           execProxy: .covers("JAVA_TOOL_OPTIONS names a trust store with tv's root and the proxy properties, which HttpClient and HttpURLConnection follow")),
            TrustDoctorRow(kind: "python", name: "Python 3.11.2 (certifi)", program: "/v/bin/python3", store: "/v/certifi/cacert.pem", trusted: .no,
                           reason: "requests and pip read certifi's bundle, which lacks tv's root", fix: "cat /v/certifi/cacert.pem /h/ca/root.pem > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\"",
                           execProxy: .covers("REQUESTS_CA_BUNDLE, PIP_CERT and SSL_CERT_FILE name a bundle with tv's root")),
            TrustDoctorRow(kind: "node", name: "Node v20.20.2", program: "/usr/bin/node", store: "node's built-in list", trusted: .no,
                           reason: "node reads its built-in list, which lacks tv's root, and NODE_EXTRA_CA_CERTS is not set",
                           fix: "export NODE_EXTRA_CA_CERTS=/h/ca/root.pem",
                           execProxy: .partly("NODE_EXTRA_CA_CERTS adds tv's root, but node v20.20.2's http/https ignore the proxy variables (Node 24 reads them with NODE_USE_ENV_PROXY=1)")),
            TrustDoctorRow(kind: "go", name: "Go 1.19.8", program: "/usr/bin/go", store: "the system store", trusted: .no,
                           reason: "it reads the system store, which does not trust tv's root", fix: systemFix,
                           execProxy: .partly("SSL_CERT_FILE names a bundle with tv's root; Go sends localhost and loopback addresses direct, whatever the variables say")),
            TrustDoctorRow(kind: "curl", name: "curl 7.88.1", program: "/usr/bin/curl", store: "the system store", trusted: .no,
                           reason: "it reads the system store, which does not trust tv's root", fix: systemFix,
                           execProxy: .covers("CURL_CA_BUNDLE and SSL_CERT_FILE name a bundle with tv's root")),
        ])
    }

    @Test("trusted places need no fix; variables that name bundles decide; node through NODE_EXTRA_CA_CERTS or the system store; an unreadable store is unknown with its reason")
    func trustedAndNamed() {
        let places: [TrustPlaceFacts] = [
            .system(TrustFacts(store: .system, installed: .yes, usable: .yes, finding: .verified), location: "/etc/ssl/certs/ca-certificates.crt"),
            .nss(browser: "Chromium", TrustFacts(store: .nss("/h/.pki/nssdb"), installed: .no, usable: .no, finding: .nssAbsent)),
            .java(program: "/usr/bin/java", version: "17.0.15", keystore: "/t/store.p12", namedBy: "JAVA_TOOL_OPTIONS", trusts: .unknown(because: "keytool could not read /t/store.p12 (bad password)"), writable: true),
            .python(program: "/usr/bin/python3", version: "3.11.2", certifi: "/etc/ssl/certs/ca-certificates.crt", certifiTrusts: .yes,
                    named: NamedBundle(variable: "REQUESTS_CA_BUNDLE", path: "/corp.pem", trusts: .no)),
            .node(program: "/usr/bin/node", version: "v24.1.0", builtInTrusts: .no, extra: NamedBundle(variable: "NODE_EXTRA_CA_CERTS", path: "/x.pem", trusts: .no), readsSystemStore: true),
            .curl(program: "/usr/bin/curl", version: "7.88.1", named: NamedBundle(variable: "CURL_CA_BUNDLE", path: "/c.pem", trusts: .yes)),
        ]
        let rows = TrustDoctor.rows(places, root: root, system: .yes, distribution: .fedora)
        #expect(rows.map(\.trusted) == [.yes, .no, .unknown(because: "keytool could not read /t/store.p12 (bad password)"), .no, .yes, .yes])
        #expect(rows.map(\.fix) == [nil, "certutil -A -d sql:/h/.pki/nssdb -n 'TunnelVision Root CA 1a2b3c4d' -t C,, -a -i /h/ca/root.pem   (then restart the browser)",
                                    "keytool -importcert -keystore /t/store.p12 -alias tunnelvision -file /h/ca/root.pem -noprompt",
                                    "cat /h/ca/root.pem >> /corp.pem", nil, nil])
        #expect(rows.map(\.reason) == ["a fresh leaf verifies for TLS against it", FindingWords.sentence(.nssAbsent),
                                       "keytool could not read /t/store.p12 (bad password)",
                                       "REQUESTS_CA_BUNDLE names /corp.pem, which lacks tv's root",
                                       "NODE_OPTIONS makes node read the system store, which trusts tv's root",
                                       "CURL_CA_BUNDLE names /c.pem, which holds tv's root"])
        #expect(rows[3].store == "/corp.pem" && rows[4].execProxy.word == "covers")
        // Fedora's own steps when the system store is the fix.
        let untrusted = TrustDoctor.rows([.go(program: "/usr/bin/go", version: "1.22.1", named: nil)], root: root, system: .no, distribution: .fedora)
        #expect(untrusted[0].fix == "sudo cp /h/ca/root.pem /etc/pki/ca-trust/source/anchors/tunnelvision-9f86d081.pem && sudo update-ca-trust")
        // A variable naming the system's own bundle: its fix is the system store's steps, not an edit of that generated file.
        let own = TrustDoctor.rows([.curl(program: "/usr/bin/curl", version: "7.88.1", named: NamedBundle(variable: "CURL_CA_BUNDLE", path: "/etc/ssl/certs/ca-certificates.crt", trusts: .no)),
                                    .go(program: "/usr/bin/go", version: "1.19.8", named: NamedBundle(variable: "SSL_CERT_FILE", path: "/tmp/mine.pem", trusts: .no))],
                                   root: root, system: .no, distribution: .debian, systemBundles: ["/usr/lib/ssl/cert.pem", "/etc/ssl/certs/ca-certificates.crt"])
        #expect(own.map(\.fix) == [systemFix, "cat /h/ca/root.pem >> /tmp/mine.pem"])
        #expect(own.map(\.reason) == ["CURL_CA_BUNDLE names /etc/ssl/certs/ca-certificates.crt, which lacks tv's root", "SSL_CERT_FILE names /tmp/mine.pem, which lacks tv's root"])
    }

    @Test("JAVA_TOOL_OPTIONS read as the JVM does: -D properties, double quotes, later wins")
    func javaOptions() {
        #expect(JavaOptions.properties("-Xmx1g -Djavax.net.ssl.trustStore=\"/a b/s.p12\"  -Dx=1 -Dx=2 -Dflag") ==
                ["javax.net.ssl.trustStore": "/a b/s.p12", "x": "2", "flag": ""])
        #expect(JavaOptions.properties("") == [:])
    }

    @Test("keytool -list -rfc: only trustedCertEntry entries' certificates")
    func keytoolListing() {
        let text = """
        Keystore type: PKCS12
        Keystore provider: SUN

        Your keystore contains 2 entries

        Alias name: mine
        Creation date: Dec 1, 2026
        Entry type: PrivateKeyEntry
        Certificate chain length: 1
        Certificate[1]:
        -----BEGIN CERTIFICATE-----
        AAAA
        -----END CERTIFICATE-----


        *******************************************
        *******************************************


        Alias name: tunnelvision-root
        Creation date: Dec 1, 2026
        Entry type: trustedCertEntry

        -----BEGIN CERTIFICATE-----
        BBBB
        -----END CERTIFICATE-----
        """
        #expect(KeytoolListing.trustedCertificatePEMs(text) == ["-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n"])
    }

    @Test("interpreter names on PATH: python, python3, python3.N; not their -config tools")
    func pythonNames() {
        #expect(["python", "python3", "python3.11", "python3.11-config", "python3-config", "python2", "python3.", "pythonx"].filter(TrustDoctorReading.isPythonName)
                == ["python", "python3", "python3.11"])
    }
}

import Testing
@testable import TrustStore

/// `file:`/`dir:` naming the system store's generated files is refused (the system store is
/// `system`, with its own consent): exact values.
@Suite struct TrustStoreSpecSystemPathTests {
    @Test func systemStoreFilesAreRefusedAsBundles() throws {
        let identity: (String) -> String = { $0 }
        #expect(throws: TrustStoreError.systemStoreByPath(store: "file:/etc/ssl/certs/ca-certificates.crt")) {
            try TrustStoreSpec.file("/etc/ssl/certs/ca-certificates.crt").checkNotSystemStore(identity)
        }
        #expect(throws: TrustStoreError.systemStoreByPath(store: "dir:/etc/ssl/certs")) { try TrustStoreSpec.dir("/etc/ssl/certs").checkNotSystemStore(identity) }
        // Through a link: what the path resolves to counts.
        #expect(throws: TrustStoreError.systemStoreByPath(store: "file:/tmp/x.pem")) {
            try TrustStoreSpec.file("/tmp/x.pem").checkNotSystemStore { $0 == "/tmp/x.pem" ? "/etc/pki/tls/certs/ca-bundle.crt" : $0 }
        }
        #expect(throws: Never.self) { try TrustStoreSpec.file("/tmp/bundle.pem").checkNotSystemStore(identity) }
        #expect(throws: Never.self) { try TrustStoreSpec.system.checkNotSystemStore(identity) }
        #expect(throws: Never.self) { try TrustStoreSpec.nss("/etc/ssl/certs").checkNotSystemStore(identity) }
    }
}

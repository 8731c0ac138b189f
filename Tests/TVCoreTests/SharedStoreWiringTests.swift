@testable import TVCore
import Testing

/// Which shared store a session writes to: `--store` first, the `store.url` setting after it.
@Suite struct SharedStoreWiringTests {
    @Test("--store wins; --store '' is none for this session whatever the setting; no flag takes the setting")
    func whichURL() {
        #expect(SharedStoreWiring.url(option: "postgresql://a/x", setting: "postgresql://b/y") == "postgresql://a/x")
        #expect(SharedStoreWiring.url(option: "", setting: "postgresql://b/y") == nil)
        #expect(SharedStoreWiring.url(option: nil, setting: "postgresql://b/y") == "postgresql://b/y")
        #expect(SharedStoreWiring.url(option: nil, setting: "") == nil)
    }
}

@testable import TVCore
import FlowStore
import Testing

/// Which shared store a session writes to: `--store` first, the `store.url` setting after it.
@Suite struct SharedStoreWiringTests {
    @Test("flows an earlier session never sent: their count, when they started, and the backfill from the minute of the first")
    func unsentSentence() {
        // 2025-12-01 20:13:20 UTC and 20:15:05.
        let many = UnsentLocalFlows(count: 5, firstStart: 1_764_620_000_500_000, lastStart: 1_764_620_105_000_000)
        #expect(SharedStoreWiring.unsentSentence(many, server: "db:5432/h", url: "postgresql://tv@db/h?sslmode=verify-full")
                == "5 flows this data folder recorded (started between 2025-12-01 20:13:20 UTC and 2025-12-01 20:15:05 UTC) are not in the shared store at db:5432/h: an earlier session gave them up while the store was away, ended before it could send them or ran while no store was set, or they were deleted there. `tv store backfill --store 'postgresql://tv@db/h?sslmode=verify-full' --from 2025-12-01T20:13Z` sends them.")
        let one = UnsentLocalFlows(count: 1, firstStart: 1_764_620_000_500_000, lastStart: 1_764_620_000_500_000)
        #expect(SharedStoreWiring.unsentSentence(one, server: "db:5432/h", url: "postgresql://tv@db/h")
                == "1 flow this data folder recorded (started 2025-12-01 20:13:20 UTC) is not in the shared store at db:5432/h: an earlier session gave it up while the store was away, ended before it could send it or ran while no store was set, or it was deleted there. `tv store backfill --store postgresql://tv@db/h --from 2025-12-01T20:13Z` sends it.")
    }

    @Test("--store wins; --store '' is none for this session whatever the setting; no flag takes the setting")
    func whichURL() {
        #expect(SharedStoreWiring.url(option: "postgresql://a/x", setting: "postgresql://b/y") == "postgresql://a/x")
        #expect(SharedStoreWiring.url(option: "", setting: "postgresql://b/y") == nil)
        #expect(SharedStoreWiring.url(option: nil, setting: "postgresql://b/y") == "postgresql://b/y")
        #expect(SharedStoreWiring.url(option: nil, setting: "") == nil)
    }
}

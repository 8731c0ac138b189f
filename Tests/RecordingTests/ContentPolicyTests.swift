import Testing
@testable import Recording

@Suite struct ContentPolicyTests {
    @Test func defaultsAreOffOneDayOneMebibyte() {
        let policy = ContentPolicy()
        #expect(!policy.keep)
        #expect(policy.expiry == .oneDay)
        #expect(policy.flowBudget == 1_048_576)
        #expect(policy.budget == RecordingBudget(turnLimit: 65_536, flowBudget: 1_048_576))
        #expect([ContentPolicy.Key.keep, ContentPolicy.Key.expiry, ContentPolicy.Key.flowBudget]
                == ["content.keep", "content.expiry", "content.flowBudget"])
    }

    @Test func keepNeedsInspectionButOffAlwaysWorks() throws {
        #expect(throws: ContentSettingError.keepNeedsInspection) { try ContentPolicy.checkKeep(true, inspectionOn: false) }
        try ContentPolicy.checkKeep(true, inspectionOn: true)
        try ContentPolicy.checkKeep(false, inspectionOn: false)
        #expect(ContentSettingError.keepNeedsInspection.message
                == "Keeping decrypted content needs inspection on, because nothing is decrypted otherwise; turn inspection on first (tv inspect on), then try again.")
    }

    @Test func expiryIsOneHourOneDayOrOneWeekNeverForever() throws {
        #expect(try ContentPolicy.parseExpiry("1h") == .oneHour)
        #expect(try ContentPolicy.parseExpiry("1 Day") == .oneDay)
        #expect(try ContentPolicy.parseExpiry("1w") == .oneWeek)
        #expect(ContentExpiry.oneWeek.microseconds == 604_800_000_000)
        #expect(throws: ContentSettingError.badExpiry("forever")) { try ContentPolicy.parseExpiry("forever") }
        #expect(ContentSettingError.badExpiry("2d").message == "'2d' is not a content expiry; use 1h, 1d or 1w (there is no 'forever').")
    }

    @Test func flowBudgetsInBytesWithBinarySuffixes() throws {
        #expect(try ContentPolicy.parseFlowBudget("1048576") == 1_048_576)
        #expect(try ContentPolicy.parseFlowBudget("256K") == 262_144)
        #expect(try ContentPolicy.parseFlowBudget("256KiB") == 262_144)
        #expect(try ContentPolicy.parseFlowBudget("1M") == 1_048_576)
        #expect(try ContentPolicy.parseFlowBudget("64MiB") == 67_108_864)
        // KB and MB as the other size settings take them (refused here alone: a trial).
        #expect(try ContentPolicy.parseFlowBudget("1MB") == 1_048_576)
        #expect(try ContentPolicy.parseFlowBudget("256kb") == 262_144)
        #expect(ContentSettingError.badFlowBudget("x").message == "'x' is not a flow budget; give bytes per direction between 1K and 64M (for example 1048576, 256KB or 1MB).")
        for bad in ["512", "65M", "65MB", "-1", "lots", "1.5M", "", "1GB"] {
            #expect(throws: ContentSettingError.badFlowBudget(bad)) { try ContentPolicy.parseFlowBudget(bad) }
        }
    }
}

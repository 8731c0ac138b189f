import Testing
@testable import HTTPReading

/// The pure policy that decides how far a body is decoded, and the sentence said when it cuts.
@Suite struct DecodingBudgetTests {
    let standard = DecodingBudget.standard

    @Test func theStandardFigures() {
        #expect(standard.ratio == 1_000)
        #expect(standard.floor == 65_536)
        #expect(standard.bodyCap == 16_777_216)
        #expect(standard.commandCap == 67_108_864)
        #expect(standard.spent == 0)
        #expect(standard.remaining == 67_108_864)
    }

    @Test func aSmallBodyMayReachTheFloor() {
        #expect(standard.limit(kept: 0) == DecodingLimit(bytes: 65_536, rule: .ratio))
        #expect(standard.limit(kept: 14) == DecodingLimit(bytes: 65_536, rule: .ratio))
        #expect(standard.limit(kept: 65) == DecodingLimit(bytes: 65_536, rule: .ratio))
        #expect(standard.limit(kept: 66) == DecodingLimit(bytes: 66_000, rule: .ratio))
    }

    @Test func aLargerBodyMayReachAThousandTimesItsKeptSizeUpToTheBodyCap() {
        #expect(standard.limit(kept: 530) == DecodingLimit(bytes: 530_000, rule: .ratio))
        #expect(standard.limit(kept: 16_303) == DecodingLimit(bytes: 16_303_000, rule: .ratio))
        #expect(standard.limit(kept: 16_777) == DecodingLimit(bytes: 16_777_000, rule: .ratio))
        #expect(standard.limit(kept: 16_778) == DecodingLimit(bytes: 16_777_216, rule: .bodyCap))
        #expect(standard.limit(kept: 1_048_576) == DecodingLimit(bytes: 16_777_216, rule: .bodyCap))
        #expect(standard.limit(kept: Int.max) == DecodingLimit(bytes: 16_777_216, rule: .bodyCap))
    }

    @Test func theCommandBudgetRunsOutAcrossBodies() {
        var budget = standard
        budget.spend(16_777_216 * 3)
        #expect(budget.remaining == 16_777_216)
        #expect(budget.limit(kept: 1_048_576) == DecodingLimit(bytes: 16_777_216, rule: .bodyCap))
        budget.spend(16_000_000)
        #expect(budget.remaining == 777_216)
        #expect(budget.limit(kept: 14) == DecodingLimit(bytes: 65_536, rule: .ratio))
        #expect(budget.limit(kept: 530) == DecodingLimit(bytes: 530_000, rule: .ratio))
        #expect(budget.limit(kept: 16_303) == DecodingLimit(bytes: 777_216, rule: .commandBudget))
        budget.spend(777_216)
        #expect(budget.spent == 67_108_864)
        #expect(budget.limit(kept: 14) == DecodingLimit(bytes: 0, rule: .commandBudget))
        budget.spend(-5)
        #expect(budget.spent == 67_108_864)
    }

    @Test func onATieTheBodysOwnRuleIsNamed() {
        var budget = DecodingBudget(ratio: 10, floor: 100, bodyCap: 1_000, commandCap: 1_000)
        #expect(budget.limit(kept: 100) == DecodingLimit(bytes: 1_000, rule: .ratio))
        #expect(budget.limit(kept: 101) == DecodingLimit(bytes: 1_000, rule: .bodyCap))
        budget.spend(900)
        #expect(budget.limit(kept: 10) == DecodingLimit(bytes: 100, rule: .ratio))
        #expect(budget.limit(kept: 11) == DecodingLimit(bytes: 100, rule: .commandBudget))
    }

    @Test func eachCutIsSaidWithItsFigures() {
        #expect(DecodingCut(limit: DecodingLimit(bytes: 65_536, rule: .ratio), codings: ["br"], kept: 14, budget: standard).sentence
            == "Decoded 64.0 KiB from 14 bytes of br and stopped: tv decodes a body to at most 1,000 times its kept size (at least 64.0 KiB); the decoded body ends there.")
        #expect(DecodingCut(limit: DecodingLimit(bytes: 530_000, rule: .ratio), codings: ["zstd"], kept: 530, budget: standard).sentence
            == "Decoded 518 KiB from 530 bytes of zstd and stopped: tv decodes a body to at most 1,000 times its kept size (at least 64.0 KiB); the decoded body ends there.")
        #expect(DecodingCut(limit: DecodingLimit(bytes: 16_777_216, rule: .bodyCap), codings: ["br", "gzip"], kept: 32_606, budget: standard).sentence
            == "Decoded 16.0 MiB from 32,606 bytes of br, gzip and stopped: tv decodes a body to at most 16.0 MiB; the decoded body ends there.")
        #expect(DecodingCut(limit: DecodingLimit(bytes: 777_216, rule: .commandBudget), codings: ["gzip"], kept: 16_303, budget: standard).sentence
            == "Decoded 759 KiB from 16,303 bytes of gzip and stopped: this command decodes at most 64.0 MiB in all; the decoded body ends there.")
        #expect(DecodingCut(limit: DecodingLimit(bytes: 0, rule: .commandBudget), codings: ["br"], kept: 1, budget: standard).sentence
            == "Not decoded: this command has already decoded 64.0 MiB, the most it decodes in all; shown: the 1 byte of br as transferred (ask for fewer flows or bodies at a time to see it decoded).")
    }
}

import Testing
@testable import Wire

/// `HeaderBlockAdmission`: which fields of one header block a reader keeps (RFC 9113 §6.5.2's
/// measure: name and value octets and 32), and which limit left the first one out.
@Suite("HTTP/2 header list limits")
struct HeaderListLimitsTests {
    static let small = HeaderListLimits(block: 100, message: 150, reading: 1_000)

    @Test("the standard limits: Chrome's 262,144 a block, twice that a message, 2 MiB a reading")
    func standard() {
        #expect(HeaderListLimits.standard == HeaderListLimits(block: 262_144, message: 524_288, reading: 2_097_152))
        #expect(HeaderListLimits.fieldSize(name: 5, value: 4_000) == 4_037)
    }

    @Test("fields are kept in order while the block has room; the first that does not fit and every one after it are counted")
    func blockRule() {
        var room = HeaderBlockAdmission(limits: Self.small)
        #expect(room.admit(name: 1, value: 17) == true)        // 50
        #expect(room.admit(name: 1, value: 17) == true)        // 100: exactly the block's room
        #expect(room.cut == nil)
        #expect(room.admit(name: 0, value: 1) == false)        // 33 more than fits
        #expect(room.admit(name: 0, value: 0) == false)        // 32: would fit, but comes after a field left out
        #expect(room.kept == 100)
        #expect(room.cut == HeaderListCut(rule: .block, limits: Self.small, fields: 2, bytes: 65))
    }

    @Test("a trailer block has what its message's earlier blocks left; any block what its reading's earlier ones left")
    func messageAndCommandRules() {
        var trailers = HeaderBlockAdmission(limits: Self.small, messageKept: 80)
        #expect(trailers.admit(name: 10, value: 8) == true)    // 50 of the message's 70
        #expect(trailers.admit(name: 10, value: 8) == false)
        #expect(trailers.cut == HeaderListCut(rule: .message, limits: Self.small, fields: 1, bytes: 50))

        var late = HeaderBlockAdmission(limits: Self.small, messageKept: 0, readingKept: 960)
        #expect(late.admit(name: 1, value: 17) == false)       // 50 of the reading's last 40
        #expect(late.kept == 0)
        #expect(late.cut == HeaderListCut(rule: .reading, limits: Self.small, fields: 1, bytes: 50))

        // The tightest room names the rule; on a tie the block's own.
        var tie = HeaderBlockAdmission(limits: HeaderListLimits(block: 100, message: 100, reading: 100))
        #expect(tie.admit(name: 50, value: 19) == false)
        #expect(tie.cut?.rule == .block)
        var spent = HeaderBlockAdmission(limits: Self.small, messageKept: 200, readingKept: 2_000)
        #expect(spent.admit(name: 0, value: 0) == false)
        #expect(spent.cut?.rule == .message)            // 0 room both; the message's before the reading's
    }

    @Test("a reading's budget counts what each block kept")
    func budget() {
        var budget = HeaderListBudget(limits: Self.small)
        var first = budget.admission(messageKept: 0)
        #expect(first.admit(name: 10, value: 58) == true)       // 100
        budget.spend(first)
        #expect(budget.kept == 100)
        for _ in 0..<8 {
            var block = budget.admission(messageKept: 0)
            _ = block.admit(name: 10, value: 58)
            budget.spend(block)
        }
        var half = budget.admission(messageKept: 0)
        #expect(half.admit(name: 10, value: 8) == true)         // 50
        budget.spend(half)
        #expect(budget.kept == 950)
        var last = budget.admission(messageKept: 0)
        #expect(last.admit(name: 10, value: 18) == false)      // 60 of the last 50
        #expect(last.cut == HeaderListCut(rule: .reading, limits: Self.small, fields: 1, bytes: 60))
    }

    @Test("a message's cuts add up; the first rule stays")
    func adding() {
        let block = HeaderListCut(rule: .block, limits: Self.small, fields: 2, bytes: 70)
        let message = HeaderListCut(rule: .message, limits: Self.small, fields: 3, bytes: 96)
        #expect(HeaderListCut.adding(nil, to: nil) == nil)
        #expect(HeaderListCut.adding(message, to: nil) == message)
        #expect(HeaderListCut.adding(nil, to: block) == block)
        #expect(HeaderListCut.adding(message, to: block) == HeaderListCut(rule: .block, limits: Self.small, fields: 5, bytes: 166))
    }

    @Test("fields left out are still decoded into the table: the next block's references to them read right")
    func tableFollowsFieldsLeftOut() throws {
        let inflater = try HPACKInflater()
        // Two literals with incremental indexing (RFC 7541 §6.2.1): x-a: 1, then x-b: 2.
        let first: [UInt8] = [0x40, 0x03] + Array("x-a".utf8) + [0x01] + Array("1".utf8)
            + [0x40, 0x03] + Array("x-b".utf8) + [0x01] + Array("2".utf8)
        var seen = 0
        let kept = try inflater.decode(first) { _, _ in
            seen += 1
            return seen == 1
        }
        #expect(kept.map { "\($0.name): \($0.value)" } == ["x-a: 1"])
        // 62 is the newest entry (x-b), 63 the one before (RFC 7541 §2.3.3).
        let second = try inflater.decode([0xbe, 0xbf])
        #expect(second.map { "\($0.name): \($0.value)" } == ["x-b: 2", "x-a: 1"])
    }
}

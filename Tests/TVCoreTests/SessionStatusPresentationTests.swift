import ControlChannel
import Dispatch
import FlowTerms
import Testing
import TVHome
@testable import TVCore

@Suite struct SessionStatusPresentationTests {
    @Test("tv status --json: camelCase keys with no spaces; dotted names nest (closed by status, recording, tunnel drops); numbers are numbers")
    func jsonKeys() {
        let values = [
            "accepted": "3", "inspection": "on", "pinningDetections": "1",
            SessionStatusPresentation.closedKey(.keptPrivate): "2", SessionStatusPresentation.closedKey(.notEncrypted): "0",
            SessionStatusPresentation.closedKey(.inspected): "1",
            "recording.flowsWaiting": "0", "recording.flowsFailing": "off",
            "tunnel.tcpRedirected": "4", "tunnel.dropped.icmp": "5", "tunnel.dropped.badChecksum": "6",
        ]
        #expect(SessionStatusPresentation.json(values).serialized() == #"{"running":true,"accepted":3,"#
            + #""closed":{"inspected":1,"keptPrivate":2,"notEncrypted":0},"errors":[],"inspection":"on","pinningDetections":1,"#
            + #""recording":{"flowsFailing":"off","flowsWaiting":0},"talkers":[],"#
            + #""tunnel":{"dropped":{"badChecksum":6,"icmp":5},"tcpRedirected":4}}"#)
    }

    @Test("numbered names (errors.1.reason, talkers.10.host) are lists in number order, not objects keyed \"1\"; with no member, empty lists")
    func numberedNamesAreLists() {
        let values = ["errors.1.reason": "refused", "errors.1.count": "2", "errors.2.reason": "reset", "errors.2.count": "1",
                      "talkers.10.host": "j", "talkers.2.host": "b", "talkers.1.host": "a",
                      "tunnel.1x": "5", "tunnel.2": "6"]
        #expect(SessionStatusPresentation.json(values).serialized() == #"{"running":true,"#
            + #""errors":[{"count":2,"reason":"refused"},{"count":1,"reason":"reset"}],"#
            + #""talkers":[{"host":"a"},{"host":"b"},{"host":"j"}],"tunnel":{"1x":5,"2":6}}"#)
    }

    @Test("the closed line in words, alphabetically; none without counts")
    func closedLine() {
        var values: [String: String] = [:]
        for status in FlowStatus.closedByProxy { values[SessionStatusPresentation.closedKey(status)] = status == .inspected ? "1" : "0" }
        #expect(SessionStatusPresentation.closedCounts(values) == "0 encrypted, 0 failed, 1 inspected, 0 kept private, 0 not encrypted")
        #expect(SessionStatusPresentation.closedCounts(["accepted": "1"]) == nil)
    }

    @Test("the flush a reading command asks for: ok when every writer finished by the deadline, not ok (and said) when one did not, every one still asked")
    func flushAnswer() {
        var deadlines: [DispatchTime] = []
        let ok = LiveSessionFlush.answer(flushing: [{ deadlines.append($0); return true }, { deadlines.append($0); return true },
                                                   { deadlines.append($0); return true }])
        #expect(ok == ControlResponse(ok: true, message: "flushed"))
        // One shared deadline, 500 ms out.
        #expect(deadlines.count == 3 && deadlines[0] == deadlines[1] && deadlines[1] == deadlines[2])
        var asked = 0
        let late = LiveSessionFlush.answer(flushing: [{ _ in asked += 1; return false }, { _ in asked += 1; return true }])
        #expect(late == ControlResponse(ok: false, message: "the writers did not finish within 500 ms"))
        #expect(asked == 2)
        #expect(LiveSessionFlush.notice(.behind) == "The running tv session did not finish writing within 1 s, so the newest flows may be missing or still shown open; run the command again in a moment.")
        #expect(LiveSessionFlush.notice(.flushed) == nil && LiveSessionFlush.notice(.noSession) == nil)
    }
}

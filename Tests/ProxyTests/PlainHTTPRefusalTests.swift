@testable import Proxy
import Testing
import Wire
import FlowTerms

/// The plain path's refusals under the relay's one rule (the hostile-input trial's shapes): a
/// response that cannot be passed on gets tv's 502 in its place when none of it reached the client.
@Suite("PlainHTTPMachine: refused responses")
struct PlainHTTPRefusalTests {
    typealias T = PlainHTTPMachineTests

    @Test("a chunked response body tv cannot read on, its head in the same read: tv's 502 in its place (it was a bare reset), the flow saying which side and why")
    func brokenBodyAnswered502() {
        for (body, problem) in [("10000000000000002\r\nab\r\n0\r\n\r\n", ChunkedBodyProblem.sizeTooLarge),
                                ("2g\r\nab\r\n0\r\n\r\n", .sizeFollowedBy(0x67))] {
            var m = T.started()
            T.requested(&m)
            let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body
            let out = T.server(&m, text, at: 3)
            let failure = ConnectionFailure.chunkedBodyRefused(.server, problem)
            #expect(out.contains(.answerClient(ConnectionMachine.errorResponse(502, failure), linger: false)), "\(out)")
            #expect(!out.contains { if case .writeClient = $0 { return true } else { return false } }, "\(out)")
            #expect(out.last == .deliverThenClose(reset: false), "\(out)")
            guard let flow = out.compactMap({ if case .closeFlow(let flow, _) = $0 { return flow } else { return nil } }).first else {
                Issue.record("\(out)")
                continue
            }
            #expect(flow.error == failure.sentence)
        }
        // Part of the response went on already: cut, as before.
        var late = T.started()
        T.requested(&late)
        _ = T.server(&late, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", at: 3)
        let cut = T.server(&late, "2g\r\n", at: 4)
        #expect(!cut.contains { if case .answerClient = $0 { return true } else { return false } }, "\(cut)")
        #expect(cut.last == .close(reset: true), "\(cut)")
    }

    @Test("a response with obs-fold: tv's 502 saying so (RFC 9112 §5.2), never passed on folded")
    func obsFoldResponse() {
        var m = T.started()
        T.requested(&m)
        let out = T.server(&m, "HTTP/1.1 200 OK\r\nX-Fold: a\r\n  folded\r\nContent-Length: 2\r\n\r\nok", at: 3)
        let failure = ConnectionFailure.responseUnreadable(HTTP1HeadParser.obsFoldSentence(.response))
        #expect(out.contains(.answerClient(ConnectionMachine.errorResponse(502, failure), linger: false)), "\(out)")
        #expect(!out.contains { if case .writeClient = $0 { return true } else { return false } }, "\(out)")
    }

    @Test("a request with obs-fold: tv's 400 saying so, nothing sent to a server")
    func obsFoldRequest() {
        var m = T.started()
        let out = T.client(&m, "POST http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nTransfer-Encoding:\r\n chunked\r\n\r\n", at: 2)
        #expect(out.contains(.answerClient(ConnectionMachine.errorResponse(400, .requestUnreadable(HTTP1HeadParser.obsFoldSentence(.request))), linger: false)), "\(out)")
        #expect(!out.contains { if case .sendServer = $0 { return true } else { return false } }, "\(out)")
    }
}

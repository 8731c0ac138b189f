import FlowTerms
@testable import Proxy
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a flow says about why it was not carried or not inspected, rendered from the kinds.
@Suite struct FlowReasonTests {
    @Test("a connect that failed behind the TUN says tv's error and what the program saw (the reset: ECONNREFUSED); the proxy's own answer adds nothing")
    func unreachableAnsweredWithReset() {
        #expect(ConnectionFailure.unreachable(target: "10.205.0.2:443", .connect(Errno(ENETUNREACH)), answered: .reset).sentence
                == "tv could not connect to 10.205.0.2:443 (network is unreachable) and answered the program with a reset, so the program saw connection refused (ECONNREFUSED)")
        #expect(ConnectionFailure.unreachable(target: "10.205.0.2:443", .noAnswer(seconds: 10), answered: .reset).sentence
                == "tv could not connect to 10.205.0.2:443 (no answer within 10 s) and answered the program with a reset, so the program saw connection refused (ECONNREFUSED)")
        #expect(ConnectionFailure.unreachable(target: "a.test:443", .connect(Errno(ENETUNREACH))).sentence
                == "tv could not connect to a.test:443 (network is unreachable)")
    }

    @Test("a program that gave up its connect: while tv's was going, or after it had completed (then tv's connection went the same way at once; it read 'while tv was connecting' of a completed one: a trial)")
    func programGaveUp() {
        #expect(ConnectionFailure.clientGone(reset: true, .afterServerConnected).sentence
                == "the client reset the connection after tv had connected to the server, before anything was relayed (tv then reset its connection to the server)")
        #expect(ConnectionFailure.clientGone(reset: false, .afterServerConnected).sentence
                == "the client closed the connection after tv had connected to the server, before anything was relayed (tv then closed its connection to the server)")
        #expect(ConnectionFailure.clientGone(reset: true, .whileConnecting).sentence == "the client reset the connection while tv was connecting to the server")
    }

    @Test("a connect still going when the TUN engine stopped says so, by what ended it (it read \"tv stopped\" for a command's unanswered connect: a trial)")
    func stillConnecting() {
        #expect(ConnectionFailure.stillConnecting(commandEnded: true).sentence == "still connecting when the command ended")
        #expect(ConnectionFailure.stillConnecting(commandEnded: false).sentence == "still connecting when tv stopped")
        #expect(ConnectionFailure.stopped.sentence == "tv stopped")
    }

    @Test("a refused request's target is quoted without its query and with userinfo masked: neither reaches a flow's error (nor the shared store)")
    func targetsQuotedWithoutContent() {
        #expect(ConnectionFailure.proxyRequestUnsupported(method: "GET", target: "/reset-password?token=SECRET").sentence
                == "tv takes CONNECT host:port or absolute-form http:// requests, not 'GET /reset-password?…'")
        #expect(ConnectionFailure.notAbsoluteHTTP(method: "GET", target: "/a#frag").sentence
                == "tv forwards absolute-form http:// requests on this connection, not 'GET /a?…'")
        #expect(ConnectionFailure.proxyRequestUnsupported(method: "GET", target: "ftp://alice:SECRET@host.test/x?y=1").sentence
                == "tv takes CONNECT host:port or absolute-form http:// requests, not 'GET ftp://***@host.test/x?…'")
        #expect(ConnectionFailure.proxyRequestUnsupported(method: "PUT", target: "/plain/path").sentence
                == "tv takes CONNECT host:port or absolute-form http:// requests, not 'PUT /plain/path'")
    }

    @Test("an encrypted flow tv would have inspected keeps why as its reason, even when a later error replaces `error`; other encrypted flows have none")
    func notInspectedReason() {
        var facts = FlowFacts(id: 1, startMicros: 0, client: Endpoint(address: "127.0.0.1", port: 1))
        facts.status = .encrypted
        facts.error = ConnectionFailure.stopped.sentence
        #expect(facts.failureReason == nil)
        let note = ConnectionFailure.clientVersionTooOld(offered: .tls11, minimum: .tls12).sentence
        facts.notInspectedReason = note
        facts.error = ConnectionFailure.read(from: .server, reset: true, .pipeClosed).sentence
        #expect(facts.failureReason == "the client offers only TLSv1.1, below tv's minimum TLSv1.2; passed through")
        facts.fail(.stopped)
        #expect(facts.failureReason == ConnectionFailure.stopped.sentence)
    }

    @Test("a flow is cut off (the decrypted capture ends its stream with RST) when it failed or ended in a reset from either side; closed in order otherwise")
    func cutOffWhenReset() {
        let refused = LegFailure.system(Errno(ECONNRESET))
        #expect(ConnectionFailure.cutsOff(status: .failed, failure: nil))
        #expect(ConnectionFailure.cutsOff(status: .inspected, failure: .read(from: .server, reset: true, refused)))
        #expect(ConnectionFailure.cutsOff(status: .inspected, failure: .clientGone(reset: true, .awaitingResponse)))
        #expect(ConnectionFailure.cutsOff(status: .inspected, failure: .send(to: .client, .system(Errno(EPIPE)))))
        #expect(!ConnectionFailure.cutsOff(status: .inspected, failure: nil))
        #expect(!ConnectionFailure.cutsOff(status: .inspected, failure: .read(from: .server, reset: false, .tlsClosed)))
        #expect(!ConnectionFailure.cutsOff(status: .inspected, failure: .idle(seconds: 300)))
        #expect(!ConnectionFailure.cutsOff(status: .inspected, failure: .stopped))
        // Who ended it, for the decrypted capture: the side that reset, else the first to close.
        #expect(ConnectionFailure.streamEnd(status: .inspected, failure: .read(from: .client, reset: true, .system(Errno(ECONNRESET))), firstClosed: .serverToClient)
                == .reset(from: .clientToServer))
        #expect(ConnectionFailure.streamEnd(status: .inspected, failure: .read(from: .server, reset: true, .system(Errno(ECONNRESET))), firstClosed: .clientToServer)
                == .reset(from: .serverToClient))
        #expect(ConnectionFailure.streamEnd(status: .inspected, failure: .clientGone(reset: true, .awaitingResponse), firstClosed: .serverToClient)
                == .reset(from: .clientToServer))
        #expect(ConnectionFailure.streamEnd(status: .inspected, failure: .send(to: .client, .system(Errno(EPIPE))), firstClosed: .serverToClient)
                == .reset(from: .clientToServer))
        #expect(ConnectionFailure.streamEnd(status: .failed, failure: nil, firstClosed: .clientToServer) == .reset(from: .serverToClient))
        #expect(ConnectionFailure.streamEnd(status: .inspected, failure: nil, firstClosed: .serverToClient) == .closed(firstFrom: .serverToClient))
        // A TLS leg's close ends the relay: that side closed first, whatever the clocks say.
        #expect(ConnectionFailure.streamEnd(status: .inspected, failure: .read(from: .server, reset: false, .tlsClosed), firstClosed: .clientToServer)
                == .closed(firstFrom: .serverToClient))
        #expect(ConnectionFailure.streamEnd(status: .inspected, failure: .idle(seconds: 300), firstClosed: .clientToServer) == .closedByClient)
    }
}

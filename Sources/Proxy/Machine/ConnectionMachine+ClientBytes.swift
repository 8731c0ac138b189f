import Wire
import FlowTerms

/// The client's bytes before the data phase: the proxy request (CONNECT, SOCKS5, absolute-form),
/// reverse mode's first head, and the first bytes after the connect (a ClientHello, or not TLS).
extension ConnectionMachine {
    mutating func clientBytes(_ all: UnsafeRawBufferPointer) -> [Command] {
        switch phase {
        case .frontEnd:
            switch reader.proxyRequest(all, frontEnd: settings.frontEnd) {
            case .needMore: return []
            case let .reply(count, reply): return [.consumeClient(count), .sendClient(reply)]
            case let .connect(count, destination): return [.consumeClient(count)] + beginConnect(destination)
            case .plainHTTP:
                phase = .plainHTTP
                return [.armTimer(millis: 0), .startPlainHTTP]
            case let .refuse(failure, answer, named):
                if let named { aim(at: named) }
                return (answer.map { [.sendClient($0)] } ?? []) + fail(failure, reset: false)
            }
        case .awaitingHead:
            guard let destination, !all.isEmpty else { return [] }
            sawHeadBytes = true
            switch reader.reverseHead(all) {
            case .needMore: return []
            case .connect:
                headWasHTTP1 = all.first != 0x16 && !all.starts(with: FrontEndReader.http2Preface)
                headWasTLS = all.first == 0x16
                return beginConnect(destination)
            case let .refuse(failure, answer): return [.sendClient(answer)] + fail(failure, reset: false)
            }
        case .awaitingFirstBytes:
            return firstBytes(all)
        default:
            return []
        }
    }

    mutating func firstBytes(_ all: UnsafeRawBufferPointer) -> [Command] {
        var out: [Command] = []
        if !sawClientBytes && all.count > 0 {
            sawClientBytes = true
            // The client spoke: the server-first wait is over; the ClientHello gets the full
            // handshake time (a split ClientHello may take a while, interop case 14).
            out.append(.armTimer(millis: settings.handshakeTimeoutMillis))
        }
        switch reader.clientHello(all) {
        case .needMoreData:
            return out
        case .notTLS:
            if let failure = unreachableToAnswer {
                // A server tv could not reach: a request head gets tv's 502, anything else the close.
                unreachableToAnswer = nil
                return (RelayState.beginsHTTP1Request(all) ? [.sendClient(Self.errorResponse(502, failure))] : []) + fail(failure, reset: false)
            }
            if upstreamTLS == true { return plainClientToTLSServer(h2: HTTP2Preface.begins(all)) }
            return relayRaw(status: .notEncrypted, observeServerHello: false)
        case .malformed(let reason):
            return fail(.clientHelloMalformed(reason), reset: false)
        case .clientHello(let hello):
            // The name is certified, dialled and recorded as an A-label (RFC 6066 §3).
            do throws(IDNARefusal) { return received(try hello.withASCIIServerName()) } catch {
                return fail(.hostNameRefused(error), reset: false)
            }
        }
    }

}

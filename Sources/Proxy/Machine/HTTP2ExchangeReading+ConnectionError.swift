import FlowTerms
import Wire

/// The connection errors of `HTTP2ExchangeReading` (`HTTP2ConnectionError`, RFC 9113 §5.4.1):
/// what its scanners and HPACK cannot read, and floods (`HTTP2FloodPolicy`), refused from where
/// their bytes begin (`ExchangeRefusal.passing`), tv's GOAWAYs in their place.
extension HTTP2ExchangeReading {
    /// Counts `event` from `side` against the flood limits; false (and `connectionError` set,
    /// its bytes from `start` on) when it is past one. A header block, or DATA with payload or
    /// END_STREAM, is progress (`HTTP2FloodPolicy.progressed`).
    func count(_ event: HTTP2FrameScanner.Event, from side: ConnectionFailure.Side, _ start: Int?) -> Bool {
        let flood: HTTP2FloodPolicy.Flood?
        switch event {
        case .headerBlock:
            floods.progressed()
            return true
        case let .data(_, count, endStream):
            guard count == 0 && !endStream else {
                floods.progressed()
                return true
            }
            flood = floods.note(.inert, from: side)
        case .ping: flood = floods.note(.ping, from: side)
        case .settings: flood = floods.note(.settings, from: side)
        case .inert: flood = floods.note(.inert, from: side)
        case let .reset(id, code, _):
            // The client's cancel of its own stream (not the NO_ERROR or CANCEL after a whole
            // response, which completes it: `client`).
            guard side == .client else { return true }
            if code == 0 || code == 8, let index = streamIndex(id), streamResponseDone(index) { return true }
            flood = floods.note(.reset, from: side)
        case .goaway:
            return true
        }
        guard let flood else { return true }
        connectionError = (side, .flood(flood), 0xb, start)
        return false
    }

    /// The connection error met while handling a frame, as the reader's stop (nil: none).
    func connectionStop() -> ExchangeReader.Stop? {
        guard let error = connectionError else { return nil }
        return refusal(error.sentBy, error.kind, code: error.code, start: error.start)
    }

    /// The refusal of `side`'s bytes from `start` on (nil: the whole burst, and the other side's
    /// connection is closed rather than sent a GOAWAY: part of what went on to it is unfinished).
    func refusal(_ side: ConnectionFailure.Side, _ kind: HTTP2ConnectionError.Kind, code: UInt32, start: Int?) -> ExchangeReader.Stop {
        let error = HTTP2ConnectionError(sentBy: side, kind: kind, errorCode: code, lastClientStream: highestClientStream,
                                         lastServerStream: highestPromised, otherSideFramed: start != nil)
        return .refused(ExchangeRefusal(failure: .http2ConnectionError(error), answer: .goaway(error), passing: start ?? 0))
    }
}

extension HTTP2FrameScanner {
    /// A scanner for relayed bytes, with the checks an endpoint makes turned on: frames within
    /// the default SETTINGS_MAX_FRAME_SIZE, 16,384 (RFC 9113 §4.2; the reader raises it when the
    /// receiver's SETTINGS does), and header blocks of at most 8 CONTINUATION frames (nghttp2
    /// 1.61's bound against CVE-2024-27316, the library curl, nghttp and nghttpd use; a block of
    /// 8 full CONTINUATIONs is 144 KiB, and tv reads at most 256 KiB of one).
    static func relayed(expectingPreface: Bool) -> HTTP2FrameScanner {
        var scanner = HTTP2FrameScanner(expectingPreface: expectingPreface)
        scanner.maxFrameSize = 16_384
        scanner.maxContinuations = 8
        return scanner
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Proxy
import Wire
import FlowTerms

/// Names from QUIC: a UDP flow whose first datagram starts like a client's Initial is read by a
/// `QUICNameReader` until its ClientHello names the flow (`HostOrigin.quic`), or the read gives up.
/// The datagrams themselves are forwarded untouched, before and after. Engine thread only.
extension EngineLoop {
    /// QUIC handshakes read at once; a new QUIC flow past it is forwarded unread (counted).
    static let maximumQUICReads = 256

    /// A new flow's first datagram: starts a read when it looks like a client Initial.
    func startQUICRead(_ flow: UDPFlow, _ payload: UnsafeRawBufferPointer) {
        guard QUICLongHeaderParser.looksLikeClientInitial(payload) else { return }
        guard quicReading < Self.maximumQUICReads else {
            counters.quicReadsSkipped.wrappingAdd(1, ordering: .relaxed)
            return
        }
        flow.quicReader = QUICNameReader(now: now)
        quicReading += 1
    }

    /// A client datagram of a flow being read.
    func readQUIC(_ flow: UDPFlow, _ payload: UnsafeRawBufferPointer) {
        guard var reader = flow.quicReader else { return }
        flow.quicReader = nil  // one owner of the buffers while it reads (no copy on write)
        let tally = reader.read(payload, now: now)
        flow.quicReader = reader
        if tally.opened > 0 { counters.quicPacketsOpened.wrappingAdd(UInt64(tally.opened), ordering: .relaxed) }
        if tally.notOpened > 0 { counters.quicPacketsNotOpened.wrappingAdd(UInt64(tally.notOpened), ordering: .relaxed) }
        if tally.restarts > 0 { counters.quicReadRestarts.wrappingAdd(UInt64(tally.restarts), ordering: .relaxed) }
        settleQUIC(flow)
    }

    /// Housekeeping: a read past its time ends.
    func expireQUIC(_ flow: UDPFlow) {
        guard flow.quicReader != nil else { return }
        flow.quicReader?.expire(now: now)
        settleQUIC(flow)
    }

    /// The flow is closing: a read still going ends unread.
    func abandonQUIC(_ flow: UDPFlow) {
        guard flow.quicReader != nil else { return }
        flow.quicReader = nil
        quicReading -= 1
        counters.quicUnreadable.wrappingAdd(1, ordering: .relaxed)
    }

    /// Whether `name` is an IPv4 or IPv6 address literal (inet_pton(3) reads it).
    static func isAddressLiteral(_ name: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        // inet_aton(3) too: it reads the forms inet_pton refuses (`010.001.002.003`, `10.1`).
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1 || inet_aton(name, &v4) != 0
    }

    /// Whether `name` (an A-label form) can be a DNS host name: letters, digits, hyphens,
    /// underscores and dots only (a re-check's `[10.1.2.3]` and `host:443` named flows).
    static func isHostName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }
    }

    /// A read that ended names its flow (reported at once) or is counted as unreadable; its
    /// memory is freed either way.
    private func settleQUIC(_ flow: UDPFlow) {
        guard let reader = flow.quicReader else { return }
        switch reader.outcome {
        case .reading:
            return
        case .failed:
            counters.quicUnreadable.wrappingAdd(1, ordering: .relaxed)
        case .finished(let read):
            // The name is recorded as an A-label (RFC 6066 §3); one IDNA refuses is not a name.
            var hello = read
            if let ascii = try? read.withASCIIServerName() { hello = ascii } else { hello.serverName = nil }
            // An address is no host name (RFC 6066 §3 allows none there): named by it, the flow
            // read as if it went to that address (a trial's SNI 10.1.2.3).
            if let name = hello.normalizedServerName, Self.isAddressLiteral(name) || !Self.isHostName(name) { hello.serverName = nil }
            if hello.normalizedServerName == nil {
                counters.quicNoName.wrappingAdd(1, ordering: .relaxed)
            } else {
                counters.quicNamed.wrappingAdd(1, ordering: .relaxed)
            }
            if var facts = flow.facts {
                facts.noteQUIC(hello)
                facts.lastActivityMicros = EngineClock.wallMicros()
                flow.facts = facts
                sink?.flowUpdated(facts)
                flow.changed = false
                flow.reportedAt = now
            }
        }
        flow.quicReader = nil
        quicReading -= 1
    }
}

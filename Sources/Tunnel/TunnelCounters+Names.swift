/// The naming counters by name, for `TunnelCounters.snapshot` (`tv status`, `tv exec`'s summary).
extension TunnelCounters {
    var nameCounters: [String: UInt64] {
        [
            "dnsAnswersWithAddresses": dnsAnswersWithAddresses.load(ordering: .relaxed),
            "dnsNamesLearned": dnsNamesLearned.load(ordering: .relaxed),
            "dnsAnswersWithoutAddresses": dnsAnswersWithoutAddresses.load(ordering: .relaxed),
            "dnsAnswersUnreadable": dnsAnswersUnreadable.load(ordering: .relaxed),
            "liveNamesEvicted": liveNamesEvicted.load(ordering: .relaxed),
            "liveNameAddresses": UInt64(max(0, liveNameAddresses.load(ordering: .relaxed))),
            "quicNamed": quicNamed.load(ordering: .relaxed),
            "quicNoName": quicNoName.load(ordering: .relaxed),
            "quicUnreadable": quicUnreadable.load(ordering: .relaxed),
            "quicPacketsOpened": quicPacketsOpened.load(ordering: .relaxed),
            "quicPacketsNotOpened": quicPacketsNotOpened.load(ordering: .relaxed),
            "quicReadRestarts": quicReadRestarts.load(ordering: .relaxed),
            "quicReadsSkipped": quicReadsSkipped.load(ordering: .relaxed),
            "quicReading": UInt64(max(0, quicReading.load(ordering: .relaxed))),
            "dnsTCPAnswers": dnsTCPAnswers.load(ordering: .relaxed),
            "dnsTCPAnswersDropped": dnsTCPAnswersDropped.load(ordering: .relaxed),
            "dnsTCPStrayResponses": dnsTCPStrayResponses.load(ordering: .relaxed),
            "dnsTCPQueriesNotTracked": dnsTCPQueriesNotTracked.load(ordering: .relaxed),
            "dnsTCPBytesNotRead": dnsTCPBytesNotRead.load(ordering: .relaxed),
            "dnsTCPStreamsNotDNS": dnsTCPStreamsNotDNS.load(ordering: .relaxed),
        ]
    }

    /// The DNS-over-TCP counts (`TCPDNSAnswers`, kept where the relays write them), copied at
    /// housekeeping.
    func noteTCPDNS(_ tcp: TCPDNSAnswers) {
        dnsTCPAnswers.store(tcp.taken.load(ordering: .relaxed), ordering: .relaxed)
        dnsTCPAnswersDropped.store(tcp.dropped.load(ordering: .relaxed), ordering: .relaxed)
        dnsTCPStrayResponses.store(tcp.strayResponses.load(ordering: .relaxed), ordering: .relaxed)
        dnsTCPQueriesNotTracked.store(tcp.queriesNotTracked.load(ordering: .relaxed), ordering: .relaxed)
        dnsTCPBytesNotRead.store(tcp.bytesNotRead.load(ordering: .relaxed), ordering: .relaxed)
        dnsTCPStreamsNotDNS.store(tcp.streamsNotDNS.load(ordering: .relaxed), ordering: .relaxed)
    }
}

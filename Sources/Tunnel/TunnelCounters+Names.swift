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
        ]
    }
}

import Foundation
import LocalCA
import Proxy
#if canImport(Glibc)
import Glibc
#endif

/// The status values both kinds of session report on their sockets (`tv run`'s control socket,
/// each `tv exec`'s own), read by `tv status`, `tv diag` and `tv top`: the proxy's counters,
/// what was not saved, the tunnel's and the capture's counters, the program lookup, the writers'
/// queues and the diagnostics. Names → decimal text, as `ControlResponse.values` carries them.
enum SessionStatusValues {
    /// - Parameters:
    ///   - tunnel: the TUN engine's counters (`TunnelCounters.snapshot`), nil for a proxy mode.
    ///   - canInspect: a CA is loaded.
    ///   - startedAtMicros: the session's start (µs since the epoch).
    static func common(proxy: ProxyServer, wiring: SessionWiring, home: String, tunnel: [String: UInt64]?,
                       capture: SessionCapture?, canInspect: Bool, startedAtMicros: Int64) -> [String: String] {
        let c = proxy.counters
        var values: [String: String] = [
            "inspection": proxy.inspectionEnabled ? "on" : "off",
            // --upstream-insecure, said by `tv status` too (only the banner said it: a trial).
            "serverCertificates": proxy.configuration.upstreamInsecure ? "not verified" : "verified",
            "openConnections": String(c.openConnections),
            "accepted": String(c.accepted),
            "refusedByCap": String(c.refusedByCap),
            "refusedPerClient": String(c.refusedPerClient),
            "headTimeouts": String(c.headTimeouts),
            "exchangeReadingStopped": String(c.exchangeReadingStopped),
            "busyPollsFoundNothing": String(c.busyPollsFoundNothing),
            "busyPollsFoundWork": String(c.busyPollsFoundWork),
            "acceptsFailedForDescriptors": String(c.acceptsFailedForDescriptors),
            "connectionCap": String(c.connectionCap),
            "descriptorLimit": String(c.descriptorLimit),
            // In the tunnel modes the UDP flows' (DNS's too) payload bytes count with the TCP
            // connections': status and top read less than their talkers added up (a re-check).
            "bytesFromClients": String(c.bytesFromClients &+ (tunnel?["udpBytesUp"] ?? 0)),
            "bytesFromServers": String(c.bytesFromServers &+ (tunnel?["udpBytesDown"] ?? 0)),
            "pinningDetections": String(c.pinningDetections),
            "clientLacksRoot": String(c.clientLacksRoot),
            "possiblePinning": String(c.possiblePinning),
            "clientLeft": String(c.clientLeft),
            "contentKeeping": wiring.content.isKeeping ? "on" : "off",
            "dataFolder": home,
            "pid": String(getpid()),
        ]
        // The root leaves are minted from now (a `--ca` of its own, or the folder's).
        if let authority = proxy.authority { values["caSHA256"] = Hex.encode(authority.root.sha256) }
        for (kind, n) in c.closedByStatus { values[SessionStatusPresentation.closedKey(kind)] = String(n) }
        values.merge(wiring.losses.values) { old, _ in old }
        if let shared = wiring.shared { values.merge(SharedStoreWiring.statusValues(shared)) { old, _ in old } }
        if let tunnel { for (key, n) in tunnel { values["tunnel." + key] = String(n) } }
        if let capture { values.merge(capture.statusValues) { old, _ in old } }
        values.merge(ProgramLookupStatus.values(wiring.programs.counters)) { old, _ in old }
        values.merge(QueueStatus.values(flows: wiring.writer.counters, decrypted: wiring.decryptedCapture?.counters)) { old, _ in old }
        values.merge(DiagnosticsCounters.values(proxy: c, caLoaded: canInspect, content: wiring.contentWriter.counters,
                                                tally: wiring.tally, startedAtMicros: startedAtMicros)) { old, _ in old }
        // A folder CA in doubt is said as such, with why (it read "missing": a trial). Not
        // `ca.…`: `tv status --json` nests those under "ca", beside this one (a re-check).
        if !canInspect, case .doubt(let doubt) = CAFolder(directory: home + "/ca").load(remakingLeafKey: false) {
            values["ca"] = "in doubt"
            values["caDoubt"] = doubt.message
        }
        return values
    }
}

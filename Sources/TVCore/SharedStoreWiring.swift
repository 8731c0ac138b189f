import FlowStore
import FlowTerms
import Settings
import TVHome

/// A session's shared store (`tv run --store URL` or the `store.url` setting; issue 25): the
/// target, this data folder's instance identity, and the writer that mirrors the local flow
/// writer's events to PostgreSQL. Decrypted content, packets, captures and key logs stay in the
/// data folder; the shared rows say which instance (and machine) has them.
public struct SharedStoreWiring: Sendable {
    let target: SharedStoreTarget
    let instance: InstanceIdentity
    let writer: FlowWriter
    /// The store's largest flow id for the instance; the session's local writer is attached.
    let idFloor: SharedIDFloor

    /// The URL this session uses: `--store` first, then the `store.url` setting; nil for none.
    /// `--store ''` is none for this session, whatever the setting (there was no way to leave
    /// the saved store out of one session).
    static func url(option: String?, setting: String) -> String? {
        if let option { return option.isEmpty ? nil : option }
        return setting.isEmpty ? nil : setting
    }

    /// Connects (said at once when it cannot) and starts the shared writer.
    /// - Throws: `FlowStoreError.badStoreURL`, `.sharedStoreUnreachable`, `.sharedStoreLoginRefused`, `.sharedStoreFailed`,
    ///   `.newerSchema`, `.cannotOpen` (the instance id or binding file); `MissingLibrary` without libpq5.
    static func start(url: String, home: TVHome, say: @escaping @Sendable (String) -> Void) throws -> SharedStoreWiring {
        let target = try SharedStoreTarget(url)
        if let warning = target.unverifiedRemoteWarning { say(warning) }
        let (instance, renewal) = try InstanceIdentity.of(home)
        if let renewal { say(InstanceBinding.renewalSentence(old: renewal.previousID, new: instance.id, renewal.mismatch)) }
        let idFloor = SharedIDFloor(known: StoreHighestMark.read(home: home, instance: instance.id), persist: { id in
            StoreHighestMark.raise(home: home, instance: instance.id, to: id)
        }, unsent: { flows in
            say(unsentSentence(flows, server: target.server, url: target.url))
        }, clashed: { new, total in
            say(clashSentence(new: new, total: total, server: target.server))
        })
        let writer = try FlowWriter(shared: target, instance: instance, localPath: home.databasePath, idFloor: idFloor) { change, counters in
            say(sentence(change, counters, server: target.server))
        }
        return SharedStoreWiring(target: target, instance: instance, writer: writer, idFloor: idFloor)
    }

    /// What the banner's `shared` line says.
    static func bannerText(_ shared: SharedStoreWiring) -> String {
        "flows also go to PostgreSQL \(shared.target.server) (\(shared.target.transportWords)) as instance \(shared.instance.machine) \(shared.instance.id); content, packets and captures stay here"
    }

    /// The line said when writes to the shared store stop and when they resume.
    static func sentence(_ change: WriteHealth.Change, _ counters: FlowWriterCounters, server: String) -> String {
        switch change {
        case .startedFailing:
            let cause = counters.lastError?.message ?? "A write to the shared store failed."
            return "Flows are not reaching the shared store at \(server): \(cause) They stay in this data folder; tv keeps up to \(FlowWriter.defaultRetryLimit) waiting flows and tries again with backoff."
        case .resumed:
            return "The shared store at \(server) is written again (\(counters.flowsNotSaved) flows did not reach it)."
        }
    }

    /// The line said when a connection finds flows of earlier sessions the store never got
    /// (`UnsentLocalFlows`), with the backfill that sends them, its `--store` included (run as
    /// printed without it, it was refused when the session's store came from `--store`: a
    /// re-check). `url` holds no password (`SharedStoreTarget` refuses one).
    static func unsentSentence(_ flows: UnsentLocalFlows, server: String, url: String) -> String {
        let from = flows.firstStart / 1_000_000 / 60 * 60
        let span = flows.count == 1 || flows.firstStart / 1_000_000 == flows.lastStart / 1_000_000 ? "started \(Units.utc(flows.firstStart / 1_000_000))"
            : "started between \(Units.utc(flows.firstStart / 1_000_000)) and \(Units.utc(flows.lastStart / 1_000_000))"
        return "\(flows.count) flow\(flows.count == 1 ? "" : "s") this data folder recorded (\(span)) \(flows.count == 1 ? "is" : "are") not in the shared store at \(server): an earlier session gave \(flows.count == 1 ? "it" : "them") up while the store was away, ended before it could send \(flows.count == 1 ? "it" : "them") or ran while no store was set, or \(flows.count == 1 ? "it was" : "they were") deleted there. `tv store backfill --store \(ShellWord.quote(url)) --from \(Units.utc(from, format: "%Y-%m-%dT%H:%MZ"))` sends \(flows.count == 1 ? "it" : "them")."
    }

    /// The line said when a batch finds flows whose ids the store holds for other flows of this
    /// instance (`SharedIDClash`): what stays where, and the likely cause.
    static func clashSentence(new: Int, total: Int, server: String) -> String {
        let these = new == 1 ? "1 flow of this session was" : "\(new) flows of this session were"
        let sofar = total > new ? " (\(total) so far)" : ""
        return "\(these) not sent to the shared store at \(server)\(sofar): it holds other flows of this instance under \(new == 1 ? "its id" : "their ids"), which it keeps; this data folder's database and its store mark look restored from an older copy. \(new == 1 ? "The flow stays" : "They stay") here; new flows go on past the store's ids."
    }

    /// `tv status` values (added keys, `sharedStore.…`): the server, the instance, whether
    /// writes fail now, and the writer's counts.
    static func statusValues(_ shared: SharedStoreWiring) -> [String: String] {
        let c = shared.writer.counters
        var values = [
            "sharedStore.server": shared.target.server,
            "sharedStore.instance": shared.instance.id,
            "sharedStore.machine": shared.instance.machine,
            "sharedStore.state": c.failing ? "retrying" : (waited(c).map { $0 >= 10 } == true ? "waiting" : "connected"),
            "sharedStore.accepted": String(c.accepted),
            "sharedStore.written": String(c.written + c.writtenOnRetry),
            "sharedStore.dropped": String(c.dropped),
            "sharedStore.failedWrites": String(c.failedWrites),
            "sharedStore.flowsWaiting": String(c.unwrittenFlows),
            // Taken and neither committed, failed nor dropped: queued, or in the write the
            // server has not answered (a trial's hung server read "0 flows waiting" beside it).
            "sharedStore.eventsUnanswered": String(max(0, c.accepted - c.written - c.failed - c.dropped)),
            "sharedStore.flowsNotSaved": String(c.flowsNotSaved),
            "sharedStore.flowUpdatesNotSaved": String(c.flowUpdatesNotSaved),
            "sharedStore.idClashes": String(shared.idFloor.clashCount),
        ]
        if let error = c.lastError { values["sharedStore.lastError"] = error.message }
        if let seconds = waited(c) { values["sharedStore.writeWaitSeconds"] = String(seconds) }
        return values
    }

    /// Whole seconds the write in progress has waited for the server; nil between writes.
    static func waited(_ c: FlowWriterCounters) -> Int64? {
        c.writingSince.map { max(0, EngineClock.wallMicros() - $0) / 1_000_000 }
    }

    /// The `shared store` line of `tv status` from its values (already escaped): "connected to
    /// SERVER (12 flows written, 0 waiting, 0 not saved)" or "retrying SERVER …: ERROR"; nil
    /// without a shared store.
    public static func statusLine(_ v: [String: String]) -> String? {
        guard let server = v["sharedStore.server"] else { return nil }
        let clashes = v["sharedStore.idClashes"].flatMap(Int.init) ?? 0
        let counts = "\(v["sharedStore.written"] ?? "0") events written, \(v["sharedStore.flowsWaiting"] ?? "0") flows waiting, \(v["sharedStore.flowsNotSaved"] ?? "0") not saved, \(v["sharedStore.dropped"] ?? "0") events dropped"
            + (clashes > 0 ? ", \(clashes) kept here under ids the store holds for other flows" : "")
        if v["sharedStore.state"] == "waiting" {
            // A server that takes a connection's writes and never answers (a trial's stopped
            // PostgreSQL) read "connected" for minutes.
            return "waiting for \(server), which has not answered a write for \(v["sharedStore.writeWaitSeconds"] ?? "?") s (\(v["sharedStore.eventsUnanswered"] ?? "?") events wait for that answer or behind it; \(counts)); forwarding goes on, flows wait in this data folder"
        }
        if v["sharedStore.state"] == "retrying" {
            return "retrying \(server) (\(counts))" + (v["sharedStore.lastError"].map { ": " + $0 } ?? "")
        }
        return "connected to \(server) (\(counts))"
    }
}

import ControlChannel
import FlowStore
import Foundation
import LocalCA
import Proxy
import Recording
import FlowTerms
import Settings
import SetupActions
import Synchronization
import TVHome

/// The session's CA and what follows from it: the data folder's CA read again when it changes,
/// the periodic trust re-check, and the content policy that holds only while inspecting.
extension Session {
    /// Mints from the data folder's CA as it is now: its root when present (a root given up stops
    /// verifying servers, `ProxyServer.setAuthority`), none when absent or in doubt. `tv run`'s
    /// `reloadCA` and a `tv exec`'s `ca-changed` answer both use it.
    /// - Returns: why the folder has no usable CA; nil when it has one.
    /// A leaf key made on the read (`LeafKeyRemade`) is said with `say`.
    static func mintFromFolderCA(home: TVHome, proxy: ProxyServer, say: (String) -> Void) -> String? {
        let folder = CAFolder(home: home)
        switch folder.load() {
        case .present(let ca):
            if let remade = ca.leafKeyRemade { say(remade.sentence) }
            if proxy.authority?.root.sha256 != ca.root.sha256 {
                proxy.setAuthority(ca)
                noteAuditRoot(home: home, proxy: proxy)
            }
            return nil
        case .absent:
            proxy.setAuthority(nil)
            return "there is no CA in \(folder.directory)"
        case .doubt(let doubt):
            proxy.setAuthority(nil)
            return doubt.message
        }
    }

    /// Tells a recording audit session the root this session mints from now
    /// (`AuditRecording.noteRoot`): at the start, and whenever it changes.
    static func noteAuditRoot(home: TVHome, proxy: ProxyServer) {
        guard let root = proxy.authority?.root.sha256 else { return }
        AuditRecording.noteRoot(home: home, sha256: Hex.encode(root), now: Int64(Date().timeIntervalSince1970 * 1_000_000))
    }

    /// Reads the data folder's CA again and mints from it (a CA made, remade or removed since
    /// the session started), then applies the saved inspection setting after asking trust again.
    /// A `--ca FILE` session keeps its own CA. Returns the sentence to answer with when the
    /// folder's CA cannot be used.
    @discardableResult
    func reloadCA() -> String? {
        guard options.caFile == nil else { return nil }
        let problem = Session.mintFromFolderCA(home: home, proxy: proxy, say: say)
        if followsSettings {
            recheckTrust()
        } else {
            applyContentPolicy((try? settings.read()) ?? SettingsRecord())
        }
        return problem
    }

    func recheckTrust() {
        let now = Int64(Date().timeIntervalSince1970)
        if options.caFile == nil, proxy.authority == nil, case .present(let ca) = CAFolder(home: home).load() {
            if let remade = ca.leafKeyRemade { say(remade.sentence) }
            proxy.setAuthority(ca)
            Session.noteAuditRoot(home: home, proxy: proxy)
        }
        guard let report = try? InspectionGuard.recheck(home: home, settings: settings, environment: environment, now: now) else { return }
        for notice in report.notices { say(notice) }
        let wanted = report.record[SettingKeys.inspectionEnabled] && canInspect
        if proxy.inspectionEnabled != wanted {
            proxy.setInspection(enabled: wanted)
            applyContentPolicy(report.record)
        }
    }

    /// The content policy in force: the saved one, kept only while inspecting (or forced).
    static func contentPolicy(_ record: SettingsRecord, inspecting: Bool, force: Bool) -> ContentPolicy {
        ContentPolicy(keep: force ? inspecting : (record[SettingKeys.contentKeep] && inspecting),
                      expiry: ContentExpiry(text: record[SettingKeys.contentExpiry]) ?? .default,
                      flowBudget: record[SettingKeys.contentFlowBudget])
    }

    /// - Returns: what the content writer deleted at once for a shorter expiry (nil: nothing
    ///   swept, or the sweep failed, which is said).
    @discardableResult
    func applyContentPolicy(_ record: SettingsRecord) -> ContentSweepReport? {
        let policy = Session.contentPolicy(record, inspecting: proxy.inspectionEnabled, force: options.forceContentKeep)
        do { return try content.apply(policy) } catch let error as UserFacingError { say(error.message) } catch { say("\(error)") }
        return nil
    }
}

import CertificateSetup
import TrustStore

/// What `tv ca remove` takes the root out of, and what it then lists as left to do by hand: a
/// pure decision over the store named, the stores tv remembers installing into
/// (`TrustInstallRecord`), and what was done.
public enum TrustRemovalPlan {
    /// The stores `--apply` takes the root out of, in order: the one named first (it must
    /// succeed), then every other store tv remembers installing into (each tried; a failure is
    /// said and left to do). Without `--apply`: none.
    public static func storesToApply(apply: Bool, chosen: TrustStoreSpec, remembered: [TrustStoreSpec]) -> [TrustStoreSpec] {
        guard apply else { return [] }
        var out = [chosen]
        for store in remembered where !out.contains(store) { out.append(store) }
        return out
    }

    /// The stores tv knows still hold the root: the ones it installed into, and the one named
    /// (unless it is the system store named only by default), minus those it took the root out of.
    public static func knownLeft(chosen: TrustStoreSpec, chosenExplicitly: Bool, remembered: [TrustStoreSpec],
                                 done: [TrustStoreSpec]) -> [TrustStoreSpec] {
        var out: [TrustStoreSpec] = []
        if chosenExplicitly || chosen != .system { out.append(chosen) }
        for store in remembered where !out.contains(store) { out.append(store) }
        return out.filter { !done.contains($0) }
    }

    /// The places tv cannot know about (other devices, browsers, the system stores of other
    /// distributions), whose steps are listed in case the root was trusted there by hand; the
    /// system stores are left out once tv took the root out of this machine's.
    public static func elsewhere(done: [TrustStoreSpec], knownLeft: [TrustStoreSpec]) -> [TrustTarget] {
        let systemHandled = done.contains(.system) || knownLeft.contains(.system)
        let system: [TrustTarget] = systemHandled ? [] : [.debian, .fedora, .arch]
        return system + [.nss(directory: nil), .macos, .ios, .android, .windows]
    }
}

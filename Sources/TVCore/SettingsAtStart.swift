import Settings

/// The saved settings a running session does not apply, read once as a session starts (pure):
/// the session answers `setting-saved` for them with `atNextStart` under `appliesKey`, and
/// `tv settings set` says the running session keeps the value it started with
/// (`LiveSessionDelivery.atNextStart`) instead of that it applied it.
enum SettingsAtStart {
    /// The control response's value saying when a saved setting applies.
    static let appliesKey = "applies"
    static let atNextStart = "next-start"

    /// Why `key` is read only as a session starts (the phrase the user reads), or nil when a
    /// running session applies it.
    static func reason(_ key: String) -> String? {
        switch key {
        case SettingKeys.clientCertificates.name:
            // Read and checked once, when the proxy starts (`ProxyConfiguration.clientCertificates`).
            return "client certificates are read when a session starts"
        case SettingKeys.requestsRecord.name, SettingKeys.logRequests.name:
            // The loops' exchange reading and the request log are wired as the session starts
            // (`SessionWiring`: `readsExchanges`, `RequestLog`).
            return "request rows and the request log are set up when a session starts"
        case SettingKeys.storeURL.name:
            // The shared writer is made as the session starts (`SharedStoreWiring`); a running
            // session said it "applied" the new URL (a trial).
            return "the shared store is connected when a session starts"
        case _ where key.hasPrefix("capture."):
            // The capture writers are made with them as the session starts (`SessionCapture`,
            // `DecryptedCaptureSetup`).
            return "capture settings are read when a session starts"
        default:
            return nil
        }
    }
}

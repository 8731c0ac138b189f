extension SettingKeys {
    /// The shared store every `tv run` / `tv exec` of this data folder writes its flows to
    /// (issue 25, i21-pg): a `postgresql://` URL without a password, or empty for none (the
    /// embedded SQLite history alone). `--store URL` overrides it for one session.
    public static let storeURL = SettingKey<String>(
        "store.url", default: "",
        summary: "A PostgreSQL URL (postgresql://user@host/db, no password: PGPASSFILE or ~/.pgpass) where sessions also write their flows, tagged with this instance; empty: none.")
}

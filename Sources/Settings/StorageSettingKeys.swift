extension SettingKeys {
    /// How long flow rows are kept (`30d`, `12h`, `2w`, or `off`; read with `SettingLimit.micros`):
    /// older flows go with their packets, names, exchanges and content (issue 19; the captures'
    /// limits are `capturesMaxBytes` / `capturesMaxAge`).
    public static let historyMaxAge = SettingKey<String>(
        "history.maxAge", default: "30d",
        summary: "How long the connection history is kept (12h, 30d, 2w, or off); older flows go with their packets and content.")
}

extension SettingKeys {
    /// How long flow rows are kept (`30d`, `12h`, `2w`, or `off`): older flows go with their
    /// packets, names, exchanges and content. Checked by `Recording.StorageLimitText.age`.
    public static let historyMaxAge = SettingKey<String>(
        "history.maxAge", default: "30d",
        summary: "How long the connection history is kept (12h, 30d, 2w, or off); older flows go with their packets and content.")
    /// How many bytes the capture files may occupy together (`2GB`, `500MB`, or `off`); the
    /// oldest go first, never the one being recorded. Checked by `StorageLimitText.bytes`.
    public static let capturesMaxBytes = SettingKey<String>(
        "captures.maxBytes", default: "2GB",
        summary: "How much room the capture files may take together (500MB, 2GB, or off); the oldest go first.")
    /// How long a capture file is kept after its last packet (`30d`, or `off`).
    public static let capturesMaxAge = SettingKey<String>(
        "captures.maxAge", default: "30d",
        summary: "How long a capture file is kept after its last packet (12h, 30d, 2w, or off).")
}

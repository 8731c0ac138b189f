/// What tv says when the disk holding the data folder is full (`FlowStoreError.diskFull`,
/// `ContentError.diskFull`, `SettingsError.diskFull`): the file that could not grow, and the way
/// on. When the data folder is alone on its disk, "free some space" can only mean tv's own
/// commands, and most of them need room to delete (SQLite writes a deletion to its log first):
/// `tv content delete` deletes its files before its rows, so it works on a full disk (a trial),
/// and then the rest has room again.
public enum DataFolderFull {
    /// "free some space on it (`tv content delete` …)": the way on, without "and try again".
    public static let wayOn = "free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room)"

    /// "The disk holding the data folder is full (PATH cannot grow); free some space on it (…)
    /// and try again."
    public static func sentence(cannotGrow path: String) -> String {
        "The disk holding the data folder is full (\(path) cannot grow); \(wayOn) and try again."
    }
}

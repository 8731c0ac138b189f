import TVHome

/// What `tv storage apply` did (`StorageManager.applyingLimits`), rendered once
/// (`StoragePresentation.applied`).
public enum StorageApplyOutcome: Sendable, Equatable {
    /// The pass ran: what it deleted.
    case applied(StorageReport)
    /// The disk holding the data folder is full and nothing is over the limits, so there was
    /// nothing to delete under them; what the folder holds, for the way on
    /// (`DataFolderFull.wayOn(_:)`).
    case nothingOverLimitsOnFullDisk(DataFolderFull.Holdings)
}

/// The order in which a capture is deleted, and what a sweep does with what a crash left: a pure
/// decision, so that the crash window can be tested step by step without a crash.
///
/// The row is marked deleted first (one transaction), then the file is unlinked, then the row is
/// marked unlinked. A process that dies between the first two leaves a file under a deleted row
/// not marked unlinked: nothing points at it any more (every reader treats a deleted row's bytes
/// as gone), and the next sweep (`CaptureCatalog.sweepDeleted`, run when a capture writer starts)
/// unlinks it. The other order would leave a live row naming a file that is not there. Once the
/// row says unlinked, a file of that name is not the deletion's: one restored from a backup was
/// swept at the next start, silently (a re-check), and is now left alone, as a file the history
/// does not describe.
public enum CaptureDeletion {
    /// One step of deleting a capture.
    public enum Step: Sendable, Equatable, CaseIterable {
        /// `captures.deleted_at` set (and `recording` cleared), in one transaction.
        case markRowDeleted
        /// The file unlinked.
        case unlinkFile
        /// `captures.unlinked_at` set: the deletion is done.
        case markRowUnlinked
    }

    /// The steps in the order `CaptureCatalog.delete` takes them.
    public static let order: [Step] = [.markRowDeleted, .unlinkFile, .markRowUnlinked]

    /// What the database and the folder say about one capture.
    public struct State: Sendable, Equatable {
        /// The row is marked deleted.
        public var rowDeleted: Bool
        /// The file is in the folder.
        public var filePresent: Bool
        /// The row says the file was unlinked (the deletion finished).
        public var rowUnlinked: Bool

        public init(rowDeleted: Bool, filePresent: Bool, rowUnlinked: Bool = false) {
            self.rowDeleted = rowDeleted
            self.filePresent = filePresent
            self.rowUnlinked = rowUnlinked
        }

        /// A live row naming a file that is not there: the one state deletion must never leave,
        /// because readers would offer bytes that are gone as if they were kept.
        public var isDangling: Bool { !rowDeleted && !filePresent }
    }

    /// What is left when the process stops after the first `completed` steps of `steps`, starting
    /// from a kept capture (live row, file present).
    public static func state(after completed: Int, of steps: [Step] = order) -> State {
        var state = State(rowDeleted: false, filePresent: true)
        for step in steps.prefix(max(0, completed)) {
            switch step {
            case .markRowDeleted: state.rowDeleted = true
            case .unlinkFile: state.filePresent = false
            case .markRowUnlinked: state.rowUnlinked = true
            }
        }
        return state
    }

    /// Whether a sweep unlinks a file in this state: its row is marked deleted, not yet unlinked,
    /// and no live writer holds it (`CaptureFolder.isRecording`). A live row's file is the user's;
    /// so is one under a finished deletion (put back since) or with no row at all.
    public static func sweeps(_ state: State, isRecording: Bool) -> Bool {
        state.rowDeleted && !state.rowUnlinked && state.filePresent && !isRecording
    }
}

import Recording
import FlowTerms

/// A flow's turns read as HTTP: the exchanges, the connection-level frames (HTTP/2), and where
/// reading had to stop and why.
public struct HTTPConversation: Sendable, Equatable {
    /// `HTTP/1.1`, `HTTP/1.0` or `HTTP/2`.
    public var version: String
    /// Request/response pairs, in the order their first message started.
    public var exchanges: [HTTPExchange]
    /// HTTP/2 frames that belong to the connection, one line each (SETTINGS, WINDOW_UPDATE, PING,
    /// GOAWAY, RST_STREAM, PRIORITY, unknown types), in the order they were read.
    public var connectionLines: [ConnectionLine]
    /// Where reading stopped before the recording did, per side, with the reason.
    public var problems: [ReadingProblem]
    /// Notes that are not problems (e.g. the connection switched protocols).
    public var notes: [String]
    /// The start of what was kept was deleted, and reading began at the first request kept
    /// whole after it (`notes` says so first); nil when the turns begin with the connection.
    public var deletedStart: DeletedStart?
    /// The sides whose recording stopped at a limit (a turn cut by `BudgetLimit`): what that side
    /// said after it was never kept, so a message missing there is missing for that reason (a
    /// trial's HTTP/2 upload past 64 KiB left every later request of the connection as "(no
    /// request was recorded)", said without a reason). Empty when neither side was cut.
    public var recordingStopped: [RecordingStop] = []

    /// Where one side's recording stopped: after turn `turn`, at `limit`.
    public struct RecordingStop: Sendable, Equatable {
        public var direction: Direction
        public var turn: Int
        public var limit: BudgetLimit
        public init(direction: Direction, turn: Int, limit: BudgetLimit) {
            self.direction = direction
            self.turn = turn
            self.limit = limit
        }

        /// The turn of each side the flow budget cut, client's first (`TurnRecorder` stops a side
        /// there, so there is at most one per side; the turn limit cuts a turn, not its side).
        public static func of(_ turns: [RecordedTurn]) -> [RecordingStop] {
            [Direction.clientToServer, .serverToClient].compactMap { side in
                turns.first { $0.turn.direction == side && $0.turn.stopsSide }
                    .map { RecordingStop(direction: side, turn: $0.turn.number, limit: $0.turn.cutBy!) }
            }
        }
    }

    /// Where `direction`'s recording stopped, if it did.
    public func recordingStopped(_ direction: Direction) -> RecordingStop? {
        recordingStopped.first { $0.direction == direction }
    }

    public init(version: String, exchanges: [HTTPExchange] = [], connectionLines: [ConnectionLine] = [],
                problems: [ReadingProblem] = [], notes: [String] = []) {
        self.version = version
        self.exchanges = exchanges
        self.connectionLines = connectionLines
        self.problems = problems
        self.notes = notes
    }

    /// One connection-level frame, summarised.
    public struct ConnectionLine: Sendable, Equatable {
        public var direction: Direction
        public var turn: Int
        public var offset: Int64
        /// e.g. `SETTINGS header_table_size=4096 enable_push=0`, `PING ack 0000000000000000`.
        public var text: String
        public init(direction: Direction, turn: Int, offset: Int64, text: String) {
            self.direction = direction
            self.turn = turn
            self.offset = offset
            self.text = text
        }
    }

    /// Reading one side stopped here.
    public struct ReadingProblem: Sendable, Equatable {
        public var direction: Direction
        /// The turn where it happened.
        public var turn: Int
        /// One sentence: what could not be read and why.
        public var reason: String
        public init(direction: Direction, turn: Int, reason: String) {
            self.direction = direction
            self.turn = turn
            self.reason = reason
        }
    }
}

/// Which limit of the `RecordingBudget` cut a turn.
public enum BudgetLimit: String, Sendable, Equatable {
    /// The turn reached `RecordingBudget.turnLimit` (64 KiB).
    case turnLimit = "turn_limit"
    /// The flow's side reached `RecordingBudget.flowBudget` (`content.flowBudget`, 1 MiB by default).
    case flowBudget = "flow_budget"
}

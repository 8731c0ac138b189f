import FlowFilter
import FlowStore
import FlowTerms

/// `tv flows --follow --filter EXPR` (and `--requests`): the rows the follower tells, matched as
/// the list commands match them (flows on their rows; requests on their rows and their flows',
/// no kept content). A trial's `--follow` printed every flow whatever the filter.
public final class FollowFilter {
    private var matcher: FilterMatcher
    private let context: ExchangeFilterContext

    /// - Parameter store: where a request's flow is looked up.
    public init(_ expression: FilterExpression, store: FlowStore) {
        matcher = FilterMatcher(expression)
        context = ExchangeFilterContext(store: store, content: nil)
    }

    /// Whether a flow's row matches.
    public func matches(_ flow: FlowRecord) -> Bool { matcher.matches(FlowRowSubject(flow)) }

    /// Whether a request's row matches.
    public func matches(_ exchange: ExchangeRecord) -> Bool { matcher.matches(ExchangeRowSubject(exchange, context: context)) }
}

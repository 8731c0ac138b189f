import FlowTerms

/// A batch's finished exchanges grouped into runs (pure): one run per flow, in the order each
/// flow's first exchange appears, its exchanges in batch order; a flow's run is split where it
/// would span more than `ExchangeRunCoding.span` of request times.
struct ExchangeRunPlan: Equatable {
    /// One future `exchange_runs` row.
    struct Run: Equatable {
        var flowID: Int64
        var exchanges: [ExchangeRecord]
        /// The earliest and latest request time among `exchanges` (µs since the epoch).
        var firstRequestTime: Int64
        var lastRequestTime: Int64
    }

    private(set) var runs: [Run] = []
    /// How many exchanges `runs` holds.
    private(set) var exchangeCount = 0

    /// Groups `finished` (exchanges whose state is no longer open).
    init(_ finished: [ExchangeRecord]) {
        var open: [Int64: Int] = [:]
        for exchange in finished {
            let time = exchange.requestTime
            if let index = open[exchange.flowID],
               max(runs[index].lastRequestTime, time) - min(runs[index].firstRequestTime, time) <= ExchangeRunCoding.span {
                runs[index].exchanges.append(exchange)
                runs[index].firstRequestTime = min(runs[index].firstRequestTime, time)
                runs[index].lastRequestTime = max(runs[index].lastRequestTime, time)
            } else {
                open[exchange.flowID] = runs.count
                runs.append(Run(flowID: exchange.flowID, exchanges: [exchange], firstRequestTime: time, lastRequestTime: time))
            }
        }
        exchangeCount = finished.count
    }
}

import FlowTerms

/// Resolving and connecting to the server: the addresses tried in the resolver's order, the
/// next after a failure, the 502 / SOCKS5 failure reply when none is left.
extension ConnectionMachine {
    mutating func beginConnect(_ destination: OriginalDestination) -> [Command] {
        aim(at: destination)
        phase = .connecting
        var out: [Command] = [.armTimer(millis: settings.connectTimeoutMillis)]
        if let address = destination.numericAddress {
            addresses = [address]
            nextAddress = 0
            out += connectNext()
        } else {
            out.append(.resolve(host: destination.hostName ?? destination.host, port: destination.port))
        }
        return out
    }

    mutating func connectNext() -> [Command] {
        guard nextAddress < addresses.count else {
            return upstreamUnreachable(lastConnectError.map { .connect($0) } ?? .noAddress, socksCode: .connectionRefused)
        }
        let address = addresses[nextAddress]
        nextAddress += 1
        return [.connect(address)]
    }
}

import FlowTerms

/// What tv remembered about one client for one host and port: its connections there pass
/// through unread (`PinKind`: it pins, or it lacks tv's root).
public struct ClientPin: Sendable, Equatable {
    /// The client's numeric address.
    public var clientAddress: String
    /// The client's ClientHello fingerprint (12 hex digits): which program, until programs are
    /// recorded.
    public var clientHello: String
    /// The host, lowercased, without a trailing dot.
    public var host: String
    public var port: UInt16
    public var kind: PinKind
    /// When it was first and last seen (µs since the epoch).
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// The latest flow's sentence for it.
    public var reason: String
    /// How many times it was remembered.
    public var count: Int64

    /// A client pin; times in µs since the epoch.
    public init(clientAddress: String, clientHello: String, host: String, port: UInt16, kind: PinKind,
                firstSeen: Int64, lastSeen: Int64, reason: String, count: Int64) {
        self.clientAddress = clientAddress
        self.clientHello = clientHello
        self.host = host
        self.port = port
        self.kind = kind
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.reason = reason
        self.count = count
    }
}

/// The `client_pins` table: pinning memory keyed by client, host and port, kept across sessions.
/// Hosts compare case-insensitively and without a trailing dot.
public struct ClientPins: Sendable {
    let connection: SharedConnection

    /// Records `kind` for the client (address, hello fingerprint) at `host`:`port` at `time` (µs):
    /// a new key starts with count 1; a known one gets count + 1, the latest kind and reason, and
    /// `lastSeen` = the later of the two times.
    /// - Throws: `FlowStoreError` when the database cannot be written.
    public func remember(clientAddress: String, clientHello: String, host: String, port: UInt16,
                         kind: PinKind, reason: String, at time: Int64) throws {
        try connection.withDatabase { database in
            let statement = try database.prepare("""
                INSERT INTO client_pins (client_address, client_hello, host, port, kind, first_seen, last_seen, reason, count)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
                ON CONFLICT(client_address, client_hello, host, port) DO UPDATE SET
                    kind = excluded.kind,
                    first_seen = min(first_seen, excluded.first_seen),
                    last_seen = max(last_seen, excluded.last_seen),
                    reason = excluded.reason,
                    count = count + 1
                """)
            try statement.bind([.text(clientAddress), .text(clientHello), .text(PinnedHosts.normalize(host)), .integer(Int64(port)),
                                .text(kind.rawValue), .integer(time), .integer(time), .text(reason)])
            try statement.step()
        }
    }

    /// Every client pin, most recently seen first (ties by host, port, client).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func list() throws -> [ClientPin] {
        try connection.withDatabase { database in
            let statement = try database.prepare("""
                SELECT client_address, client_hello, host, port, kind, first_seen, last_seen, reason, count FROM client_pins
                ORDER BY last_seen DESC, host, port, client_address, client_hello
                """)
            var pins: [ClientPin] = []
            try statement.forEachRow { row in
                // A kind this version does not know (a newer tv wrote it) is left out, not guessed.
                guard let kind = PinKind(rawValue: row.string(at: 4) ?? "") else { return }
                pins.append(ClientPin(clientAddress: row.string(at: 0) ?? "", clientHello: row.string(at: 1) ?? "",
                                      host: row.string(at: 2) ?? "", port: UInt16(truncatingIfNeeded: row.int64(at: 3)),
                                      kind: kind, firstSeen: row.int64(at: 5), lastSeen: row.int64(at: 6),
                                      reason: row.string(at: 7) ?? "", count: row.int64(at: 8)))
            }
            return pins
        }
    }

    /// Forgets every client pin of `kind` (any client, host and port): `lacksRoot` when the
    /// data folder's root changed, since each was a verdict about the root before.
    /// - Returns: how many were removed.
    /// - Throws: `FlowStoreError` when the database cannot be written.
    @discardableResult
    public func forget(kind: PinKind) throws -> Int {
        try connection.withDatabase { database in
            let statement = try database.prepare("DELETE FROM client_pins WHERE kind = ?")
            try statement.bind([.text(kind.rawValue)])
            try statement.step()
            return database.changes
        }
    }

    /// Forgets every client pin for `host` (any client, port and kind).
    /// - Returns: how many were removed.
    /// - Throws: `FlowStoreError` when the database cannot be written.
    @discardableResult
    public func forget(host: String) throws -> Int {
        try connection.withDatabase { database in
            let statement = try database.prepare("DELETE FROM client_pins WHERE host = ?")
            try statement.bind([.text(PinnedHosts.normalize(host))])
            try statement.step()
            return database.changes
        }
    }
}

import FlowStore
import FlowTerms
import Testing
@testable import Capture

/// The packet rows of two writes committed through one set of statements, prepared once
/// (`CapturePacketStatements`): every parameter is bound again per row, NULL flags included,
/// so nothing of a row leaks into the next, and the writer keeps the set for its database.
@Suite("capture packet rows: committed through statements kept from write to write")
struct CapturePacketRowsTests {
    private static func add(_ rows: inout CapturePacketRows, flow: UInt64, _ index: Int, time: Int64, offset: Int64, known: Int64 = 0) {
        let (direction, bytes) = index < 0 ? (Direction.serverToClient, [UInt8](repeating: 0, count: 5)) : Conversation.packets[index]
        let packet = QueuedPacket(flow: flow, direction: direction, timeMicros: time, originalLength: bytes.count,
                                  includedLength: bytes.count, block: 0..<0)
        _ = bytes.withUnsafeBytes { rows.add(packet, bytes: $0, offset: offset, known: { _ in known }) }
    }

    private static func text(_ database: SQLiteDatabase, _ sql: String) throws -> String? {
        if case .text(let value) = try database.scalar(sql) { return value }
        return nil
    }

    @Test("every meaning a row can have is one the packets table takes (its CHECK constraint): a new meaning needs a migration first")
    func everyMeaningIsStorable() throws {
        let scratch = CaptureScratch()
        let database = try SQLiteDatabase(path: scratch.databasePath)
        try FlowSchema.migrate(database)
        for (n, meaning) in PacketMeaning.allCases.enumerated() {
            // A session lost whole batches of rows to a meaning the constraint did not list.
            try database.execute("""
                INSERT INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, tcp_flags, meaning)
                VALUES (1, \(n + 1), 1, 0, 0, 'client_to_server', 60, 60, NULL, '\(meaning.rawValue)')
                """)
        }
        #expect(try database.scalar("SELECT count(*) FROM packets").int64 == Int64(PacketMeaning.allCases.count))
    }

    @Test("two writes, one set of statements: the exact rows (an unreadable packet's flags NULL), counts raised, the file's row updated")
    func twoWrites() throws {
        let scratch = CaptureScratch()
        let database = try SQLiteDatabase(path: scratch.databasePath)
        try FlowSchema.migrate(database)
        try database.execute("INSERT INTO captures (seq, path, started_at, snaplen) VALUES (7, 'x', 1, 0)")
        let statements = try CapturePacketStatements(database: database)

        var first = CapturePacketRows(rowsPerFlow: 4)
        Self.add(&first, flow: 5, 0, time: 100, offset: 60)          // SYN
        Self.add(&first, flow: 9, -1, time: 101, offset: 120)        // 5 bytes: no IP header
        Self.add(&first, flow: 5, 3, time: 102, offset: 180)         // the request: data
        _ = first.finish()
        try first.commit(seq: 7, bytes: 300, packets: 3, statements: statements)

        var second = CapturePacketRows(rowsPerFlow: 4)
        Self.add(&second, flow: 5, 6, time: 200, offset: 300, known: 2)   // RST: cut off, n 3
        Self.add(&second, flow: 5, 2, time: 201, offset: 360, known: 2)   // ACK, n 4
        Self.add(&second, flow: 5, 5, time: 202, offset: 420, known: 2)   // past 4 rows: counted only
        _ = second.finish()
        try second.commit(seq: 7, bytes: 480, packets: 6, statements: statements)

        let rows = try Self.text(database, """
            SELECT group_concat(flow_id || ' ' || n || ' ' || capture_seq || ' ' || file_offset || ' ' || time_us || ' ' || direction
              || ' ' || orig_len || ' ' || incl_len || ' ' || coalesce(tcp_flags, 'null') || ' ' || meaning, '; ')
            FROM (SELECT * FROM packets ORDER BY flow_id, n)
            """)
        #expect(rows == "5 1 7 60 100 client_to_server 60 60 2 opened; 5 2 7 180 102 client_to_server 141 141 24 data; "
            + "5 3 7 300 200 server_to_client 40 40 20 cut_off; 5 4 7 360 201 client_to_server 52 52 16 delivery_confirmed; "
            + "9 1 7 120 101 server_to_client 5 5 null data")
        #expect(try Self.text(database, "SELECT group_concat(flow_id || '=' || packets, ' ') FROM (SELECT * FROM packet_counts ORDER BY flow_id)")
            == "5=5 9=1")
        #expect(try Self.text(database, "SELECT bytes || ' ' || packets FROM captures WHERE seq = 7") == "480 6")
    }

    @Test("the writer prepares its set once for its database and again only for another handle")
    func keptForTheWriter() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriterThread(configuration: scratch.configuration(), counters: CaptureCountersBox())
        defer { writer.stop() }
        let database = try #require(writer.database)
        let kept = try writer.packetStatements(on: database)
        #expect(try writer.packetStatements(on: database) === kept)
        let other = try SQLiteDatabase(path: scratch.databasePath)
        let remade = try writer.packetStatements(on: other)
        #expect(remade !== kept && remade.database === other)
        #expect(try writer.packetStatements(on: other) === remade)
    }
}

import FlowStore
import Recording
import TVHome

/// A command that reads kept content (`TurnsReading`, `HARReading`): it reads the two stores of
/// one data folder — the flow rows and the turns index with its segment files — and hands what
/// is printed to a `CommandOutput`.
public protocol KeptContentReading {
    /// Reads `flows` and `content` and writes what the command prints to `output`.
    func run(flows: FlowStore, content: ContentStore, to output: some CommandOutput) throws
}

extension KeptContentReading {
    /// Opens the stores of the data folder `home` read only (so a full disk does not stop a
    /// reading), runs `run(flows:content:to:)` over them, and closes them.
    /// - Throws: `FlowStoreError` when a store cannot be opened; as `run(flows:content:to:)`.
    public func run(home: TVHome, to output: some CommandOutput) throws {
        let flows = try FlowStore(readingHome: home)
        defer { flows.close() }
        let content = try ContentStore(readingHome: home)
        defer { content.close() }
        try run(flows: flows, content: content, to: output)
    }
}

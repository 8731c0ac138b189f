import Settings

/// How the captures stand against their limits (`captures.maxBytes`, `captures.maxAge`): the
/// answer `tv captures room` gives. Pure; every outcome distinct (seed "Captures", Room left).
public enum CaptureRoom: Sendable, Equatable {
    /// Neither limit is set: nothing removes a capture unless its owner does.
    case neitherLimit(used: Int64)
    /// A limit's saved text cannot be read: no comparison is made (names and texts).
    case unreadable([Unreadable])
    /// Both halves, each one of its four outcomes.
    case limits(size: Size, expiry: Expiry)

    public struct Unreadable: Sendable, Equatable {
        public var name: String
        public var text: String
        public init(name: String, text: String) {
            self.name = name
            self.text = text
        }
    }

    /// The size half.
    public enum Size: Sendable, Equatable {
        /// `left` bytes of room under `limit`; the captures use `used`.
        case roomToSpare(left: Int64, limit: Int64, used: Int64)
        /// The captures already fill the limit: closed ones will be lost to make room.
        case full(used: Int64, limit: Int64)
        /// The capture being recorded is over the limit on its own: no deletion can meet it.
        case openCaptureOverLimit(open: Int64, limit: Int64)
        /// The captures fill the limit and every closed one is audit evidence, which no limit
        /// removes until its audit session is deleted.
        case heldAsEvidence(used: Int64, limit: Int64)
        /// No size limit.
        case noLimit(used: Int64)
    }

    /// The expiry half.
    public enum Expiry: Sendable, Equatable {
        /// The oldest closed capture expires at `micros` (µs since the epoch).
        case date(micros: Int64, maxAgeMicros: Int64)
        /// `count` closed captures are already past the expiry.
        case past(count: Int, maxAgeMicros: Int64)
        /// No capture has closed yet: none has an age to count from.
        case noDateYet(maxAgeMicros: Int64)
        /// Every closed capture is audit evidence: none expires until its audit session is deleted.
        case onlyEvidence(maxAgeMicros: Int64)
        /// Captures do not expire.
        case off
    }

    /// The bytes the size limit still leaves (nil: no size limit, or limits not read); 0 when full.
    public var leftUnderLimit: Int64? {
        guard case let .limits(size, _) = self else { return nil }
        switch size {
        case .roomToSpare(let left, _, _): return left
        case .full, .openCaptureOverLimit, .heldAsEvidence: return 0
        case .noLimit: return nil
        }
    }

    /// Evaluates the captures (`files`: not deleted) against the two limits at `nowMicros`. A
    /// capture's age counts from its close (`endedMicros`); the one being recorded has none.
    /// `decryptedBytes`: the decrypted captures (`decrypted-*.pcapng`), which live under the same
    /// size limit (`DecryptedCaptureRetention`) and so count in what is used (a trial's room said
    /// 2.6 MiB left where 2.3 MiB of decrypted captures left 0.3). `evidence`: the sequences of
    /// the captures audit sessions hold, which count but never go (a trial's room said the oldest
    /// would go, and gave it an expiry date, when it was evidence).
    public static func evaluate(files: [CaptureFile], decryptedBytes: Int64 = 0, evidence: Set<Int64> = [],
                                maxBytes: (name: String, limit: SettingLimit),
                                maxAge: (name: String, limit: SettingLimit), nowMicros: Int64) -> CaptureRoom {
        var unreadable: [Unreadable] = []
        if case .unreadable(let text) = maxBytes.limit { unreadable.append(Unreadable(name: maxBytes.name, text: text)) }
        if case .unreadable(let text) = maxAge.limit { unreadable.append(Unreadable(name: maxAge.name, text: text)) }
        if !unreadable.isEmpty { return .unreadable(unreadable) }
        // What is on disk, as retention counts it (`CaptureFile.bytesOnDisk`): a file cut or gone
        // since its row was written counted its row's size, and room and `tv storage` disagreed
        // (a trial). A file gone from the folder takes no room and has no age.
        let files = files.compactMap { file -> CaptureFile? in
            guard let size = file.bytesOnDisk else { return nil }
            var present = file
            present.bytes = size
            return present
        }
        let used = files.reduce(Int64(0)) { $0 + $1.bytes } + max(0, decryptedBytes)
        if case .off = maxBytes.limit, case .off = maxAge.limit { return .neitherLimit(used: used) }
        let size: Size
        switch maxBytes.limit {
        case .limit(let limit):
            let open = files.filter(\.isRecording).reduce(Int64(0)) { $0 + $1.bytes }
            let closed = files.filter { !$0.isRecording }
            if open >= limit {
                size = .openCaptureOverLimit(open: open, limit: limit)
            } else if used >= limit, !closed.isEmpty, closed.allSatisfy({ evidence.contains($0.seq) }) {
                size = .heldAsEvidence(used: used, limit: limit)
            } else if used >= limit {
                size = .full(used: used, limit: limit)
            } else {
                size = .roomToSpare(left: limit - used, limit: limit, used: used)
            }
        default:
            size = .noLimit(used: used)
        }
        let expiry: Expiry
        switch maxAge.limit {
        case .limit(let age):
            let closedFiles = files.filter { !$0.isRecording }
            let closed = closedFiles.filter { !evidence.contains($0.seq) }.map { $0.endedMicros ?? $0.startedMicros }
            let past = closed.filter { $0 + age <= nowMicros }.count
            if past > 0 {
                expiry = .past(count: past, maxAgeMicros: age)
            } else if let oldest = closed.min() {
                expiry = .date(micros: oldest + age, maxAgeMicros: age)
            } else if !closedFiles.isEmpty {
                expiry = .onlyEvidence(maxAgeMicros: age)
            } else {
                expiry = .noDateYet(maxAgeMicros: age)
            }
        default:
            expiry = .off
        }
        return .limits(size: size, expiry: expiry)
    }
}

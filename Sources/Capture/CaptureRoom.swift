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

    /// How long closed captures are kept: the rule every expiry outcome says.
    public struct ExpiryRule: Sendable, Equatable {
        /// `captures.maxAge` (µs); nil when it is off (packet captures do not expire).
        public var maxAgeMicros: Int64?
        /// How long a closed decrypted capture is kept (µs): the sooner of `captures.maxAge` and
        /// `content.expiry`, since they hold plaintext (`DecryptedCaptureRetention.maxAge`); nil
        /// when the rule is not said (no decrypted capture, and none being written).
        public var decryptedMaxAgeMicros: Int64?

        public init(maxAgeMicros: Int64?, decryptedMaxAgeMicros: Int64? = nil) {
            self.maxAgeMicros = maxAgeMicros
            self.decryptedMaxAgeMicros = decryptedMaxAgeMicros
        }
    }

    /// The expiry half.
    public enum Expiry: Sendable, Equatable {
        /// The oldest closed capture expires at `micros` (µs since the epoch).
        case date(micros: Int64, rule: ExpiryRule)
        /// `count` closed captures are already past their expiry.
        case past(count: Int, rule: ExpiryRule)
        /// No capture has closed yet: none has an age to count from.
        case noDateYet(rule: ExpiryRule)
        /// Every closed capture is audit evidence: none expires until its audit session is deleted.
        case onlyEvidence(rule: ExpiryRule)
        /// Captures do not expire (no decrypted capture is kept either).
        case off
    }

    /// A decrypted capture (`decrypted-*.pcapng`) as the room counts it: they live under the same
    /// size limit, and expire by the sooner of `captures.maxAge` and `content.expiry`.
    public struct DecryptedFile: Sendable, Equatable {
        public var bytes: Int64
        /// Its last write (µs since the epoch): a closed one's age counts from it, as retention's.
        public var modifiedMicros: Int64
        /// A session writes it (never deleted).
        public var isRecording: Bool
        /// An audit session holds it (never deleted by a limit).
        public var isEvidence: Bool

        public init(bytes: Int64, modifiedMicros: Int64, isRecording: Bool, isEvidence: Bool = false) {
            self.bytes = bytes
            self.modifiedMicros = modifiedMicros
            self.isRecording = isRecording
            self.isEvidence = isEvidence
        }
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
    /// `decrypted`: the decrypted captures (`decrypted-*.pcapng`), which live under the same size
    /// limit (`DecryptedCaptureRetention`) and so count in what is used (a trial's room said
    /// 2.6 MiB left where 2.3 MiB of decrypted captures left 0.3), and expire after
    /// `decryptedMaxAgeMicros` (a trial's room said "No capture has closed yet" while 13 closed
    /// decrypted captures were past their expiry). `evidence`: the sequences of the captures audit
    /// sessions hold, which count but never go (a trial's room said the oldest would go, and gave
    /// it an expiry date, when it was evidence).
    public static func evaluate(files: [CaptureFile], decrypted: [DecryptedFile] = [], decryptedMaxAgeMicros: Int64? = nil,
                                evidence: Set<Int64> = [], maxBytes: (name: String, limit: SettingLimit),
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
        let used = files.reduce(Int64(0)) { $0 + $1.bytes } + decrypted.reduce(Int64(0)) { $0 + max(0, $1.bytes) }
        let decryptedAge = decrypted.isEmpty ? nil : decryptedMaxAgeMicros
        if case .off = maxBytes.limit, case .off = maxAge.limit, decryptedAge == nil { return .neitherLimit(used: used) }
        let size: Size
        switch maxBytes.limit {
        case .limit(let limit):
            // The files being written are never deleted, whatever their kind (a trial's room said
            // the limit was full while the only file over it was the decrypted one being written).
            let open = files.filter(\.isRecording).reduce(Int64(0)) { $0 + $1.bytes }
                + decrypted.filter(\.isRecording).reduce(Int64(0)) { $0 + $1.bytes }
            let closed = files.filter { !$0.isRecording }.map { evidence.contains($0.seq) }
                + decrypted.filter { !$0.isRecording }.map(\.isEvidence)
            if open >= limit {
                size = .openCaptureOverLimit(open: open, limit: limit)
            } else if used >= limit, !closed.isEmpty, closed.allSatisfy({ $0 }) {
                size = .heldAsEvidence(used: used, limit: limit)
            } else if used >= limit {
                size = .full(used: used, limit: limit)
            } else {
                size = .roomToSpare(left: limit - used, limit: limit, used: used)
            }
        default:
            size = .noLimit(used: used)
        }
        var packetAge: Int64?
        if case .limit(let age) = maxAge.limit { packetAge = age }
        let rule = ExpiryRule(maxAgeMicros: packetAge, decryptedMaxAgeMicros: decryptedAge)
        guard packetAge != nil || decryptedAge != nil else { return .limits(size: size, expiry: .off) }
        // When each closed capture expires; nil for one that never does (evidence, or packet
        // captures with captures.maxAge off).
        let closedFiles = files.filter { !$0.isRecording }
        let closedDecrypted = decrypted.filter { !$0.isRecording }
        var expiries: [Int64] = []
        if let packetAge {
            expiries += closedFiles.filter { !evidence.contains($0.seq) }.map { ($0.endedMicros ?? $0.startedMicros) + packetAge }
        }
        if let decryptedAge {
            expiries += closedDecrypted.filter { !$0.isEvidence }.map { $0.modifiedMicros + decryptedAge }
        }
        let anyClosed = !(packetAge == nil ? [] : closedFiles).isEmpty || !closedDecrypted.isEmpty
        let past = expiries.filter { $0 <= nowMicros }.count
        let expiry: Expiry
        if past > 0 {
            expiry = .past(count: past, rule: rule)
        } else if let first = expiries.min() {
            expiry = .date(micros: first, rule: rule)
        } else if anyClosed {
            expiry = .onlyEvidence(rule: rule)
        } else {
            expiry = .noDateYet(rule: rule)
        }
        return .limits(size: size, expiry: expiry)
    }
}

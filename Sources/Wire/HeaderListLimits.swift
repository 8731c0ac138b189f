/// How much of HTTP/2's decoded header lists a reader keeps, measured as RFC 9113 §6.5.2 measures
/// SETTINGS_MAX_HEADER_LIST_SIZE: each field's name and value octets plus 32. Pure.
///
/// HPACK (RFC 7541 §6.1) lets one byte stand for a whole dynamic-table entry, so a header block's
/// decoded size has no bound in its encoded size: a server's 63 KB of trailers, 60,000 one-byte
/// references to a 4,000-byte field, decoded to 240 MB, and `tv request` took 262 MB, `tv web`'s
/// JSON of it 1.2 GB; 942 KiB of such blocks took `tv turns --http --json` to 12.4 GB (a trial).
/// A peer bounds this with SETTINGS_MAX_HEADER_LIST_SIZE; tv's readers take what a browser
/// announces:
/// - `block`: 256 KiB of one header block (a HEADERS or PUSH_PROMISE with its CONTINUATIONs),
///   Chrome's SETTINGS_MAX_HEADER_LIST_SIZE: Chromium 156 announces 262,144 in its first
///   SETTINGS, loads a response whose header list is 262,144 bytes and resets the connection at
///   263,168 (nghttpd -v and a python-h2 server on 127.0.0.1, 2026-12-06), so no page it loads is
///   cut here. Firefox announces no such limit. The data path's frame scanner takes header
///   blocks of up to the same 256 KiB encoded (`HTTP2FrameScanner.maxHeaderBlockBytes`).
/// - `message`: 512 KiB of one message's header and trailer blocks together (a message has at
///   most two field sections, RFC 9113 §8.1; a peer that sends more trailer blocks gets no more
///   room).
/// - `reading`: 2 MiB of every header block one reading of a connection keeps (`tv turns
///   --http`, `tv request`, each flow of `tv export har`). Chromium 156's 602 requests for a
///   page of 600 images on one connection decoded to 1,047 bytes each on average by this
///   measure (1,153 at most), nghttpd's answers to 399: 0.83 MiB for the page (nghttpd -v,
///   127.0.0.1), so a page more than twice that heavy is read whole. The bound is on a
///   reading's memory, which the smallest fields cost most: kept as one-byte references to the
///   static table's `:method GET` (42 bytes by this measure each, ~330 bytes held a field by the
///   pretty JSON, its tree and `tv web`'s copy), a connection's 8 MiB took `tv turns --http
///   --json` to 106 MB resident, 4 MiB to 71 MB (`tv web`'s answer 91 MB), 2 MiB to 54 MB
///   (`tv web` 64 MB; 150 responses of 6,000 references through `tv run`, 2026-12-06:
///   `HPACKBombRunTests`).
public struct HeaderListLimits: Sendable, Equatable {
    /// The limits every reader uses (bytes by RFC 9113 §6.5.2's measure).
    public static let standard = HeaderListLimits(block: 262_144, message: 524_288, reading: 2 * 1_048_576)

    /// Bytes one header block keeps.
    public var block: Int
    /// Bytes one message's header blocks keep together.
    public var message: Int
    /// Bytes all header blocks of one reading of a connection keep together.
    public var reading: Int

    /// Limits in bytes by RFC 9113 §6.5.2's measure.
    public init(block: Int, message: Int, reading: Int) {
        self.block = block
        self.message = message
        self.reading = reading
    }

    /// A field's size by RFC 9113 §6.5.2: its name's and value's octets and 32.
    public static func fieldSize(name: Int, value: Int) -> Int { name + value + 32 }
}

/// The header fields a reader left out of one header block (or of a message's, added up), and
/// which of `HeaderListLimits` left them out first.
public struct HeaderListCut: Sendable, Equatable {
    /// The limits of `HeaderListLimits`.
    public enum Rule: Sendable, Equatable {
        /// `block`: one header block's.
        case block
        /// `message`: one message's header blocks together.
        case message
        /// `reading`: what one reading of a connection keeps in all.
        case reading
    }

    /// The limit that left the first of them out.
    public var rule: Rule
    /// The limits in force (for their figures).
    public var limits: HeaderListLimits
    /// Fields left out.
    public var fields: Int
    /// Their size by RFC 9113 §6.5.2's measure.
    public var bytes: Int

    /// `fields` fields of `bytes` left out, the first by `rule` of `limits`.
    public init(rule: Rule, limits: HeaderListLimits, fields: Int, bytes: Int) {
        self.rule = rule
        self.limits = limits
        self.fields = fields
        self.bytes = bytes
    }

    /// `earlier` with `later`'s fields added (a message's blocks): the rule stays the earlier's.
    public static func adding(_ later: HeaderListCut?, to earlier: HeaderListCut?) -> HeaderListCut? {
        guard var sum = earlier else { return later }
        guard let later else { return sum }
        sum.fields += later.fields
        sum.bytes += later.bytes
        return sum
    }
}

/// Which fields of one header block a reader keeps: each in order while the block, its message
/// and the reading all have room for it; the first that does not fit, and every field after it
/// in the block, are left out and counted (`cut`). Pure. The block must still be decoded to its
/// end by the caller: each block changes the HPACK table the next one is read with (RFC 7541
/// §2.3.2), and RFC 9113 §10.5.1 asks the same of a peer that refuses a header list.
public struct HeaderBlockAdmission: Sendable, Equatable {
    public let limits: HeaderListLimits
    private let messageRoom: Int
    private let readingRoom: Int
    /// Bytes kept of the block so far (RFC 9113 §6.5.2's measure).
    public private(set) var kept = 0
    /// What was left out so far; nil while every field was kept.
    public private(set) var cut: HeaderListCut?

    /// A block of a message that has kept `messageKept` bytes of earlier blocks, in a reading
    /// that has kept `readingKept` in all.
    public init(limits: HeaderListLimits, messageKept: Int = 0, readingKept: Int = 0) {
        self.limits = limits
        messageRoom = max(0, limits.message - messageKept)
        readingRoom = max(0, limits.reading - readingKept)
    }

    /// Whether to keep the next field of the block, `name` and `value` octets long.
    public mutating func admit(name: Int, value: Int) -> Bool {
        let size = HeaderListLimits.fieldSize(name: name, value: value)
        if var cut {
            cut.fields += 1
            cut.bytes += size
            self.cut = cut
            return false
        }
        let after = kept + size
        guard after > limits.block || after > messageRoom || after > readingRoom else {
            kept = after
            return true
        }
        // The tightest room names the rule; on a tie the block's own before the message's.
        let rule: HeaderListCut.Rule
        if limits.block <= messageRoom && limits.block <= readingRoom { rule = .block }
        else if messageRoom <= readingRoom { rule = .message }
        else { rule = .reading }
        cut = HeaderListCut(rule: rule, limits: limits, fields: 1, bytes: size)
        return false
    }
}

/// One reading's room for header fields: the limits, and what its blocks kept so far (each
/// block's `HeaderBlockAdmission` is made from it and spent into it). Pure.
public struct HeaderListBudget: Sendable, Equatable {
    public let limits: HeaderListLimits
    /// Bytes kept by the reading so far (RFC 9113 §6.5.2's measure).
    public private(set) var kept = 0

    /// A budget with nothing kept yet.
    public init(limits: HeaderListLimits = .standard) {
        self.limits = limits
    }

    /// The admission of a block of a message that kept `messageKept` bytes of earlier blocks.
    public func admission(messageKept: Int) -> HeaderBlockAdmission {
        HeaderBlockAdmission(limits: limits, messageKept: messageKept, readingKept: kept)
    }

    /// Counts what `admission`'s block kept against the reading.
    public mutating func spend(_ admission: HeaderBlockAdmission) {
        kept += admission.kept
    }
}

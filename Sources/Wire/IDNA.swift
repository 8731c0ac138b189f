import CIDN2

/// Why IDNA refuses a host name: libidn2's return code (`Idn2_rc`), its reason rendered from the
/// code by libidn2 itself. Decisions branch on `code`, never on `reason`.
public struct IDNARefusal: Error, Sendable, Hashable {
    /// The host as the client sent it (UTF-8; the U-label form).
    public let host: String
    /// libidn2's return code, negative, e.g. -304 (`IDN2_DISALLOWED`), -305 (`IDN2_CONTEXTJ`).
    public let code: Int32

    /// Creates a refusal of `host` with libidn2's `code`.
    public init(host: String, code: Int32) {
        self.host = host
        self.code = code
    }

    /// libidn2's sentence for the code, lowercase, no full stop, e.g. "string contains a
    /// disallowed character".
    public var reason: String { String(cString: idn2_strerror(code)) }

    /// libidn2's name for the code, e.g. "IDN2_DISALLOWED".
    public var codeName: String { String(cString: idn2_strerror_name(code)) }
}

/// Host names as DNS and certificates carry them: U-labels (`bücher`) converted once to
/// A-labels (`xn--bcher-kva`) by libidn2, with UTS #46 processing, nontransitional (as browsers
/// do: `faß.de` is `xn--fa-hia.de`, not `fass.de`), STD3 rules off (as WHATWG URL does).
public enum IDNA {
    /// Whether `host` holds a byte outside ASCII (so a U-label, or bytes IDNA will refuse).
    public static func isInternational(_ host: String) -> Bool {
        host.utf8.contains { $0 >= 0x80 }
    }

    /// `host` with every label in ASCII: an all-ASCII host is returned unchanged (case, `_` and
    /// all: tv only converts what is international); otherwise libidn2's `idn2_to_ascii_8z`
    /// (UTS #46 mapping, so `BÜCHER.test` → `xn--bcher-kva.test`; a trailing dot is kept).
    /// Throws the refusal with libidn2's code when IDNA2008/UTS #46 refuses the name (a
    /// disallowed code point, a joiner out of context, a label starting or ending with '-', …).
    public static func asciiHost(_ host: String) throws(IDNARefusal) -> String {
        guard isInternational(host) else { return host }
        var output: UnsafeMutablePointer<CChar>?
        let code = idn2_to_ascii_8z(host, &output, Int32(IDN2_NONTRANSITIONAL.rawValue))
        defer { idn2_free(output) }
        guard code == Int32(IDN2_OK.rawValue), let output else { throw IDNARefusal(host: host, code: code) }
        return String(cString: output)
    }

    /// `text` (a search text or a regex over host names, which tv stores as A-labels) with each
    /// run of label characters — letters, digits, marks and `-` — that holds a character beyond
    /// ASCII replaced by its A-label: `bücher` → `xn--bcher-kva`, `^www\.bücher\.test$` →
    /// `^www\.xn--bcher-kva\.test$`. Only a whole label converts to what a host holds (the
    /// A-label of `ücher` is no part of `bücher`'s). Nil when nothing in `text` is international,
    /// or a run is one IDNA refuses.
    public static func aLabelRuns(_ text: String) -> String? {
        guard isInternational(text) else { return nil }
        var out = ""
        var run = ""
        func flush() throws(IDNARefusal) {
            out += isInternational(run) ? try asciiHost(run) : run
            run = ""
        }
        do throws(IDNARefusal) {
            for character in text {
                if character == "-" || character.isLetter || character.isNumber || character.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .nonspacingMark || $0.properties.generalCategory == .spacingMark }) {
                    run.append(character)
                } else {
                    try flush()
                    out.append(character)
                }
            }
            try flush()
        } catch {
            return nil
        }
        return out
    }

    /// The bytes as text when they are valid UTF-8 (a host name before IDNA), else nil.
    static func utf8Text(_ bytes: some Collection<UInt8>) -> String? {
        String(validating: bytes, as: UTF8.self)
    }
}

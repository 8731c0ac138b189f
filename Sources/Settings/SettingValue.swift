import TVHome

/// A type a setting can hold: how it is written in `settings.json` and typed on a command line.
///
/// `Bool`, `String` and `Int` conform; a later key with its own vocabulary (e.g. `content.expiry`
/// as `1h|1d|1w`) conforms its own enum by implementing these four members.
public protocol SettingValue: Sendable, Equatable {
    /// The value read from the JSON file, or nil when the JSON has the wrong type.
    init?(json: JSONValue)
    /// The value as it is written to the JSON file.
    var json: JSONValue { get }
    /// The value read from command-line text (`on`, `off`, `system`, `60`), or nil.
    init?(text: String)
    /// The value as a person reads it.
    var text: String { get }
}

extension Bool: SettingValue {
    public init?(json: JSONValue) {
        guard case .bool(let b) = json else { return nil }
        self = b
    }
    public var json: JSONValue { .bool(self) }
    /// Accepts on/off, true/false, yes/no, 1/0 (any case).
    public init?(text: String) {
        switch text.lowercased() {
        case "on", "true", "yes", "1": self = true
        case "off", "false", "no", "0": self = false
        default: return nil
        }
    }
    public var text: String { self ? "on" : "off" }
}

extension String: SettingValue {
    public init?(json: JSONValue) {
        guard case .string(let s) = json else { return nil }
        self = s
    }
    public var json: JSONValue { .string(self) }
    public init?(text: String) { self = text }
    public var text: String { self }
}

extension Int: SettingValue {
    public init?(json: JSONValue) {
        guard case .int(let i) = json else { return nil }
        self = Int(i)
    }
    public var json: JSONValue { .int(Int64(self)) }
    public init?(text: String) {
        guard let i = Int(text) else { return nil }
        self = i
    }
    public var text: String { String(self) }
}

/// A list of strings: a JSON array in the file; on a command line a JSON array
/// (`'["a=FILE","b=FILE"]'`), one entry alone (`a=FILE`), or nothing (`''`, the empty list).
extension Array: SettingValue where Element == String {
    public init?(json: JSONValue) {
        guard case .array(let items) = json else { return nil }
        var strings: [String] = []
        for item in items {
            guard case .string(let s) = item else { return nil }
            strings.append(s)
        }
        self = strings
    }
    public var json: JSONValue { .array(map { .string($0) }) }
    public init?(text: String) {
        if text.isEmpty { self = []; return }
        guard text.hasPrefix("[") else { self = [text]; return }
        guard let value = try? SettingsJSONReader.parse(Array<UInt8>(text.utf8)), let list = [String](json: value) else { return nil }
        self = list
    }
    public var text: String { json.serialized() }
}

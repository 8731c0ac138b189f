import TVHome

/// The one durable settings record, as a value: every saved key with its JSON value.
///
/// Keys the running build does not know are kept and written back unchanged, so a newer `tv`'s
/// settings survive an older one. Reading a key that was never saved gives its default.
public struct SettingsRecord: Sendable, Equatable {
    /// Saved values by dotted key name.
    public private(set) var values: [String: JSONValue]

    /// A record with nothing saved: every key reads as its default.
    public init() { values = [:] }

    /// A record holding exactly `values`.
    public init(values: [String: JSONValue]) { self.values = values }

    /// The saved value of `key`, or its default when nothing (or a value of another type) is saved.
    public subscript<Value>(key: SettingKey<Value>) -> Value {
        values[key.name].flatMap(Value.init(json:)) ?? key.defaultValue
    }

    /// Whether `key` has a saved value.
    public func isSaved<Value>(_ key: SettingKey<Value>) -> Bool { values[key.name] != nil }

    /// This record with `key` set to `value`.
    public func setting<Value>(_ key: SettingKey<Value>, to value: Value) -> SettingsRecord {
        var copy = self
        copy.values[key.name] = value.json
        return copy
    }

    /// This record without a saved value for `key` (it reads as its default).
    public func removing<Value>(_ key: SettingKey<Value>) -> SettingsRecord {
        var copy = self
        copy.values[key.name] = nil
        return copy
    }

    /// The record as the JSON object written to disk (keys sorted, so diffs stay small).
    public var json: JSONValue {
        .object(values.keys.sorted().map { ($0, values[$0]!) })
    }
}

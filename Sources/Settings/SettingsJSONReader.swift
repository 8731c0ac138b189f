import Foundation
import TVHome

/// Reads JSON text (RFC 8259) into a `JSONValue`, keeping booleans and integers apart.
enum SettingsJSONReader {
    /// - Throws: `Invalid` with a short reason when the text is not JSON.
    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(Node.self, from: Data(bytes)).value
        } catch let error as DecodingError {
            throw Invalid(reason: describe(error))
        }
    }

    struct Invalid: Error { let reason: String }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted: return "it is not valid JSON"
        case .typeMismatch, .valueNotFound, .keyNotFound: return "it holds a value JSON cannot describe"
        @unknown default: return "it is not valid JSON"
        }
    }

    /// One decoded JSON node. Bool is tried before numbers: Foundation's decoder refuses to read
    /// `1` as Bool and `true` as a number, so the two never mix.
    private struct Node: Decodable {
        let value: JSONValue

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: Decoder) throws {
            if let object = try? decoder.container(keyedBy: Key.self) {
                var fields: [(String, JSONValue)] = []
                for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                    fields.append((key.stringValue, try object.decode(Node.self, forKey: key).value))
                }
                value = .object(fields)
                return
            }
            if var array = try? decoder.unkeyedContainer() {
                var items: [JSONValue] = []
                while !array.isAtEnd { items.append(try array.decode(Node.self).value) }
                value = .array(items)
                return
            }
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { value = .null }
            else if let b = try? single.decode(Bool.self) { value = .bool(b) }
            else if let i = try? single.decode(Int64.self) { value = .int(i) }
            else if let d = try? single.decode(Double.self) { value = .double(d) }
            else { value = .string(try single.decode(String.self)) }
        }
    }
}

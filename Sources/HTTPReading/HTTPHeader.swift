/// One header field as it was sent: the name keeps its case (HTTP/1) or is lowercase (HTTP/2,
/// RFC 9113 §8.2.1); pseudo-headers (`:method`, `:status`) are kept as fields too.
public struct HTTPHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HTTPHeader {
    /// The value of the first field named `name` (case-insensitive), if any.
    public func first(_ name: String) -> String? {
        first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Every value of fields named `name` (case-insensitive), in order.
    public func all(_ name: String) -> [String] {
        filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}

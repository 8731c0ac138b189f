/// GREASE ("Generate Random Extensions And Sustain Extensibility", RFC 8701 §2): reserved
/// 16-bit values of the form `0x?A?A` with both bytes equal (`0x0A0A`, `0x1A1A`, … `0xFAFA`)
/// that clients sprinkle into cipher suites, extension types, named groups and
/// supported_versions so that servers keep ignoring unknown values.
///
/// The parsers keep GREASE values in every list exactly as sent; use this to filter them out.
public enum GREASE {
    /// Whether `value` is one of the 16 GREASE values reserved by RFC 8701 §2 for cipher suites,
    /// extension types, named groups, signature algorithms and versions.
    @inlinable
    public static func isReserved(_ value: UInt16) -> Bool {
        value & 0x0F0F == 0x0A0A && value >> 8 == value & 0xFF
    }
}

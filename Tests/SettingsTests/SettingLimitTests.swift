import Settings
import Testing

@Suite("Size and age limits in settings")
struct SettingLimitTests {
    @Test("Sizes: binary units, any case, a bare number is bytes; off, none, empty and 0 are off; anything else unreadable")
    func sizes() {
        #expect(SettingLimit.bytes("2GB") == .limit(2 << 30))
        #expect(SettingLimit.bytes("64 mb") == .limit(64 << 20))
        #expect(SettingLimit.bytes("500KiB") == .limit(500 << 10))
        #expect(SettingLimit.bytes("1T") == .limit(1 << 40))
        #expect(SettingLimit.bytes("4096") == .limit(4096))
        #expect(SettingLimit.bytes("off") == .off)
        #expect(SettingLimit.bytes("") == .off)
        #expect(SettingLimit.bytes("0GB") == .off)
        #expect(SettingLimit.bytes("2.5GB") == .unreadable("2.5GB"))
        #expect(SettingLimit.bytes("lots") == .unreadable("lots"))
        #expect(SettingLimit.bytes("99999999999TB") == .unreadable("99999999999TB"))
    }

    @Test("What a user may set: off or a whole number above zero with its unit, saved canonically; nothing else")
    func userValues() {
        #expect(SettingLimit.userBytes("2GB") == "2GB")
        #expect(SettingLimit.userBytes(" 64 mb ") == "64MB")
        #expect(SettingLimit.userBytes("500kib") == "500KB")
        #expect(SettingLimit.userBytes("1t") == "1TB")
        #expect(SettingLimit.userBytes("4096b") == "4096B")
        #expect(SettingLimit.userBytes("OFF") == "off")
        for refused in ["", "0", "0GB", "4096", "none", "2.5GB", "lots", "-5MB", "99999999999TB", "off please"] {
            #expect(SettingLimit.userBytes(refused) == nil, "\(refused)")
        }
        // Sizes too large to count are told apart from text that is not a size (a trial's
        // 8589934592GB, exactly 2⁶³ bytes, was refused as not a size).
        #expect(SettingLimit.largestUserBytes == "8388607TB" && SettingLimit.userBytes("8388607TB") == "8388607TB")
        for tooMany in ["8589934592GB", "8388608TB", "99999999999999999999GB", " 9223372036854775808 b"] {
            #expect(SettingLimit.isTooManyBytes(tooMany), "\(tooMany)")
        }
        for notTooMany in ["8388607TB", "2GB", "lots", "99999999999999999999", "-99999999999999999999GB", "99999999999999999999XB"] {
            #expect(!SettingLimit.isTooManyBytes(notTooMany), "\(notTooMany)")
        }
        #expect(SettingLimit.userMicros("30D") == "30d")
        #expect(SettingLimit.userMicros("15 min") == "15m")
        #expect(SettingLimit.userMicros("12h") == "12h")
        #expect(SettingLimit.userMicros("Off") == "off")
        for refused in ["", "0", "0d", "30", "none", "1y", "-5d", "1.5h"] {
            #expect(SettingLimit.userMicros(refused) == nil, "\(refused)")
        }
    }

    @Test("Ages: s, m/min, h, d, w in µs")
    func ages() {
        #expect(SettingLimit.micros("30d") == .limit(30 * 86_400_000_000))
        #expect(SettingLimit.micros("90s") == .limit(90_000_000))
        #expect(SettingLimit.micros("15min") == .limit(900_000_000))
        #expect(SettingLimit.micros("1h") == .limit(3_600_000_000))
        #expect(SettingLimit.micros("2w") == .limit(2 * 604_800_000_000))
        #expect(SettingLimit.micros("None") == .off)
        #expect(SettingLimit.micros("1y") == .unreadable("1y"))
    }
}

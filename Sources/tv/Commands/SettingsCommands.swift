import CommandLineParser
import FlowStore
import Foundation
import Proxy
import Recording
import Settings
import SetupActions
import TVCore
import TrustStore
import TVHome

/// `tv settings show|get|set`: the one durable settings record, saved first and applied to a
/// running session second.
enum SettingsCommands {
    static let spec = CommandSpec(
        name: "settings", summary: "Show or change tv's saved settings.",
        discussion: "Settings live in $TV_HOME/settings.json. A change is saved first, then a running session is told. Inspection itself is turned on and off with `tv inspect on|off`, which checks trust first. `tv settings` lists every setting with what it means. The capture settings (capture.rotateBytes, capture.rotateAge, captures.maxBytes, captures.maxAge) cover the packet captures and the decrypted captures (capture.decrypted) alike; decrypted captures hold plaintext, so a closed one also expires with content.expiry, whichever is sooner.",
        options: [OptionSpec("json", help: "Print as JSON.")],
        subcommands: [
            CommandSpec(name: "show", summary: "Every setting with its value (the default).",
                        options: [OptionSpec("json", help: "Print as JSON."),
                                  OptionSpec("meanings", help: "With --json: a list of {name, value, saved, default, meaning}, in this order (tv web's Settings screen).")]),
            CommandSpec(name: "get", summary: "One setting's value.",
                        positionals: [PositionalSpec("KEY", help: "The setting's name, e.g. content.expiry.", completions: SettingKeys.all.map(\.name))]),
            CommandSpec(name: "set", summary: "Save one setting and apply it to a running session.",
                        options: [OptionSpec("yes", help: "Agree to a limit (history.maxAge, content.expiry, captures.maxBytes, captures.maxAge) that deletes what is kept now (without it, such a limit is refused and the count said).")],
                        // inspection.enabled is turned with `tv inspect on|off`, which check trust first.
                        positionals: [PositionalSpec("KEY", help: "The setting's name.",
                                                     completions: SettingKeys.all.map(\.name).filter { $0 != SettingKeys.inspectionEnabled.name }),
                                      PositionalSpec("VALUE", help: "Its new value.")]),
        ],
        defaultSubcommand: "show")

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "settings show": show, "settings get": get, "settings set": set,
    ]

    static func show(_ inv: Invocation) throws -> Int32 {
        try noteMissingFolder(inv)
        let record = try inv.settingsStore().read()
        let rows = SettingKeys.all.map { key -> (String, String, Bool, String) in
            let saved = record.values[key.name]
            return (key.name, saved.map { redacted(key.name, text($0)) } ?? key.defaultText, saved != nil, key.summary)
        }
        if inv.json && inv.command.has("meanings") {
            inv.console.line(JSONValue.array(SettingKeys.all.map { key in
                JSONValue.object([("name", .string(key.name)), ("value", redacted(key.name, record.values[key.name] ?? key.defaultJSON)),
                                  ("saved", .bool(record.values[key.name] != nil)), ("default", key.defaultJSON),
                                  ("meaning", .string(key.summary))])
            }).serialized(pretty: true))
            return 0
        }
        if inv.json {
            inv.console.line(JSONValue.object(SettingKeys.all.map { ($0.name, redacted($0.name, record.values[$0.name] ?? $0.defaultJSON)) }).serialized(pretty: true))
            return 0
        }
        let width = rows.map(\.0.count).max() ?? 0
        let valueWidth = rows.map(\.1.count).max() ?? 0
        for (name, value, saved, summary) in rows {
            inv.console.line(name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                             + value.padding(toLength: valueWidth, withPad: " ", startingAt: 0)
                             + (saved ? "          " : "  default ") + " " + summary)
        }
        let home = try inv.home()
        let live = home.exists ? (try? LiveSessionStatus.answer(home: home, timeoutSeconds: 2))??.values : nil
        for line in SessionOverrides.lines(inspectionSaved: record[SettingKeys.inspectionEnabled], contentKeepSaved: record[SettingKeys.contentKeep],
                                           session: live) {
            inv.console.line(line)
        }
        return 0
    }

    static func get(_ inv: Invocation) throws -> Int32 {
        let name = inv.command.positionals[0]
        guard let key = SettingKeys.all.first(where: { $0.name == name }) else { throw unknown(name) }
        try noteMissingFolder(inv)
        let record = try inv.settingsStore().read()
        inv.console.line(record.values[key.name].map { redacted(key.name, text($0)) } ?? key.defaultText)
        return 0
    }

    /// Reading settings makes nothing; a missing data folder is said on standard error (the
    /// defaults still follow), so a typo'd `--data-dir` shows.
    static func noteMissingFolder(_ inv: Invocation) throws {
        let home = try inv.home()
        if !home.exists { inv.console.note(TVHomeError.missing(path: home.path).message) }
    }

    static func set(_ inv: Invocation) throws -> Int32 {
        let name = inv.command.positionals[0]
        let value = inv.command.positionals[1]
        let settings = try inv.settingsStore()
        let change: SettingChange
        var applies: String?
        // What a limit saved with --yes deletes, said after it (`CaptureLimitConsent`).
        var agreed: String?
        switch name {
        case SettingKeys.inspectionEnabled.name:
            throw UsageRefusal("Inspection is turned on and off with `tv inspect on` / `tv inspect off`, which check trust first.")
        case SettingKeys.trustStore.name:
            // A value that is not a store is a usage error (2) like every other setting's; a
            // file: store whose folder is missing is refused now, as `tv ca trust --apply` would.
            let spec: TrustStoreSpec
            do {
                spec = try Invocation.checkedStore(value)
            } catch let error as UserFacingError {
                throw UsageRefusal(error.message)
            }
            change = try settings.set(SettingKeys.trustStore, to: spec.description)
        case SettingKeys.introSeen.name:
            change = try settings.set(SettingKeys.introSeen, to: try bool(name, value))
        case SettingKeys.contentKeep.name:
            let on = try bool(name, value)
            if on {
                // Only possible with inspection on, asked in the present tense.
                let report = try InspectionGuard.recheck(home: try inv.home(), settings: settings,
                                                         environment: inv.environment, now: inv.now)
                for notice in report.notices { inv.console.note(notice) }
                try ContentPolicy.checkKeep(true, inspectionOn: report.record[SettingKeys.inspectionEnabled])
            }
            change = try settings.set(SettingKeys.contentKeep, to: on)
        case SettingKeys.contentExpiry.name:
            let expiry = try ContentPolicy.parseExpiry(value)
            if !inv.yes { try ContentExpiryConsent.check(inv, expiry: expiry, settings: settings) }
            change = try settings.set(SettingKeys.contentExpiry, to: expiry.text)
        case SettingKeys.contentFlowBudget.name:
            change = try settings.set(SettingKeys.contentFlowBudget, to: try ContentPolicy.parseFlowBudget(value))
        case SettingKeys.clientCertificates.name:
            guard let list = [String](text: value) else {
                throw UsageRefusal("\(name) takes a JSON array of \"HOST_PATTERN=FILE\" strings, one HOST_PATTERN=FILE, or '' for none, not '\(value)'.")
            }
            var saved: [String] = []
            for entry in list {
                // An entry that is not HOST_PATTERN=FILE cannot be read: a usage error (2); a file
                // that cannot be used is said as the proxy says it (1).
                var rule: ClientCertificateRule
                do { rule = try ClientCertificateRule(parsing: entry) } catch { throw UsageRefusal(error.message) }
                // Saved with an absolute path: a relative one stopped `tv run` from starting in any
                // other folder, a service's included (a trial).
                rule.file = Invocation.absolutePath(rule.file)
                try rule.check(now: inv.now)
                saved.append(rule.pattern + "=" + rule.file)
            }
            change = try settings.set(SettingKeys.clientCertificates, to: saved)
            applies = "It applies when the next session starts (`tv stop`, then `tv run`)."
        case SettingKeys.requestsRecord.name:
            change = try settings.set(SettingKeys.requestsRecord, to: try bool(name, value))
            applies = "It applies when the next session starts; rows already kept stay."
        case SettingKeys.logRequests.name:
            change = try settings.set(SettingKeys.logRequests, to: try bool(name, value))
            applies = "It applies when the next `tv run` starts (or now, for this run only: `tv run --log requests`)."
        case SettingKeys.historyMaxAge.name:
            guard let age = SettingLimit.userMicros(value) else {
                throw UsageRefusal("\(name) takes an age above zero like 12h, 30d or 2w (s, m for minutes, h, d, w), or off, not '\(value)'.")
            }
            if !inv.yes, case let .limit(micros) = SettingLimit.micros(age) {
                try HistoryAgeConsent.check(inv, age: age, micros: micros)
            }
            change = try settings.set(SettingKeys.historyMaxAge, to: age)
            // Said with nothing to delete too (`1M` for a month was saved as one minute, and the
            // aside came only with a count: a trial).
            if age.hasSuffix("m") { applies = "m is minutes: a month is 30d." }
        case SettingKeys.captureDecrypted.name:
            change = try settings.set(SettingKeys.captureDecrypted, to: try bool(name, value))
            applies = "It applies when the next session with inspection on starts (any mode); the file is captures/decrypted-….pcapng, 0600: it holds what inspected connections said."
        case SettingKeys.storeURL.name:
            // Checked now (a URL tv can connect with, no password in it), not at the next start.
            if !value.isEmpty {
                do { _ = try SharedStoreTarget(value) } catch let error as FlowStoreError { throw UsageRefusal(error.message) }
            }
            change = try settings.set(SettingKeys.storeURL, to: value)
            applies = value.isEmpty ? "It applies when the next session starts: its flows stay in this data folder only."
                : "It applies when the next session starts (`tv stop`, then `tv run`); `tv store instances` reads the store now."
        case _ where CaptureSettingsCommand.names.contains(name):
            (change, applies) = try CaptureSettingsCommand.set(name, value, settings: settings) {
                do {
                    try CaptureLimitConsent.check(inv, name: name, value: value, settings: settings)
                } catch let question as LimitConsentNeeded where inv.yes {
                    // Agreed beforehand: said all the same, since a file being recorded goes only
                    // later, when it closes (a re-check's --yes said nothing of a 28.7 MiB file
                    // that then went at rotation).
                    agreed = question.deletes
                }
            }
        default:
            throw unknown(name)
        }
        // An empty value is shown as it is typed ('').
        func shown(_ text: String) -> String { text.isEmpty ? "''" : redacted(name, text) }
        // Saved over the default in another spelling (1MB for 1048576): in force already.
        let sameInForce = change.saved && change.oldText == change.newText
        if sameInForce {
            inv.console.line("Saved \(name) = \(shown(change.newText)), its default, now set explicitly; nothing in force changed.")
        } else if change.saved {
            inv.console.line("Saved \(name) = \(shown(change.newText)) (was \(shown(change.oldText))).")
        } else {
            inv.console.line("\(name) is already \(shown(change.newText)); nothing changed.")
        }
        if let sentence = change.delivery.sentence { inv.console.line(sentence) }
        if change.saved, let agreed { inv.console.line("As agreed with --yes: \(agreed).") }
        if change.saved, !sameInForce, let applies { inv.console.line(applies) }
        if change.saved, change.delivery == .noSession, StorageLimitsReading.isLimit(name) {
            // No session to apply it: a limit is applied when it changes, here (silent when nothing goes).
            for line in try StorageCommands.applyAutomatically(inv) { inv.console.line(line) }
        }
        return 0
    }

    /// A setting's value as printed: store.url with any password in it masked (tv refuses to
    /// save one, but a settings file edited by hand may hold one).
    static func redacted(_ name: String, _ text: String) -> String {
        name == SettingKeys.storeURL.name ? SharedStoreTarget.redacted(text) : text
    }

    static func redacted(_ name: String, _ value: JSONValue) -> JSONValue {
        guard name == SettingKeys.storeURL.name, case .string(let text) = value else { return value }
        return .string(SharedStoreTarget.redacted(text))
    }

    static func bool(_ name: String, _ value: String) throws -> Bool {
        guard let b = Bool(text: value) else { throw UsageRefusal("\(name) takes on or off, not '\(value)'.") }
        return b
    }

    static func unknown(_ name: String) -> UsageRefusal {
        UsageRefusal("'\(name)' is not a setting; `tv settings` lists them (\(SettingKeys.all.map(\.name).joined(separator: ", "))).")
    }

    static func text(_ value: JSONValue) -> String {
        switch value {
        case .bool(let b): return b ? "on" : "off"
        case .string(let s): return s
        case .int(let i): return String(i)
        default: return value.serialized()
        }
    }
}

import CertificateSetup
import LocalCA
import SetupActions
import TrustStore
import TVHome

/// Lines and JSON for stages and trust answers; decides nothing.
enum SetupRendering {
    /// The stage's command as the user types it: as root with this data folder when it needs root.
    static func command(_ stage: SetupStage, dataDir: String) -> String? {
        guard let command = stage.nextCommand else { return nil }
        guard stage.nextCommandNeedsRoot, command.hasPrefix("tv ") else { return command }
        return SudoCommand.line(String(command.dropFirst(3)), dataDir: dataDir)
    }

    static func stageLines(_ stage: SetupStage, dataDir: String) -> [String] {
        let number = stage.step.number.map { "Step \($0) of 4 — " } ?? ""
        var lines = ["\(number)\(stage.step.title) (\(stage.state.word))", "  " + stage.meaning]
        switch stage.state {
        case .notStarted, .succeeded: break
        case .inProgress(let what): lines.append("  Waiting for \(what).")
        case let .failed(reason, retry): lines.append("  Failed: \(reason). \(retry)")
        case let .partiallyDone(done, missing):
            lines.append("  Done: \(done)")
            if missing != stage.nextStep { lines.append("  Missing: \(missing)") }
        }
        lines.append("  Next: \(stage.nextStep)" + (command(stage, dataDir: dataDir).map { " (`\($0)`)" } ?? ""))
        return lines
    }

    static func stageJSON(_ stage: SetupStage, dataDir: String) -> JSONValue {
        var state: [(String, JSONValue)] = [("word", .string(stage.state.word))]
        switch stage.state {
        case .notStarted, .succeeded: break
        case .inProgress(let what): state.append(("waitingFor", .string(what)))
        case let .failed(reason, retry): state += [("reason", .string(reason)), ("retry", .string(retry))]
        case let .partiallyDone(done, missing): state += [("done", .string(done)), ("missing", .string(missing))]
        }
        return .object([
            ("step", .string(stage.step.rawValue)),
            ("number", stage.step.number.map(JSONValue.string) ?? .null),
            ("title", .string(stage.step.title)),
            ("state", .object(state)),
            ("meaning", .string(stage.meaning)),
            ("nextStep", .string(stage.nextStep)),
            ("nextCommand", command(stage, dataDir: dataDir).map(JSONValue.string) ?? .null),
            ("notice", stage.notice.map(JSONValue.string) ?? .null),
            ("canGenerate", .bool(stage.canGenerate)),
            ("canTurnInspectionOn", .bool(stage.canTurnInspectionOn)),
        ])
    }

    static func answerText(_ answer: TrustAnswer) -> String {
        if case .unknown(let because) = answer { return "unknown — \(because)" }
        return answer.word
    }

    static func trustLines(_ facts: TrustFacts) -> [String] {
        ["Trust store: \(facts.store) (\(StoreWords.name(facts.store)))",
         "  installed       \(answerText(facts.installed))",
         "  usable for TLS  \(answerText(facts.usable))" + (facts.usable == .yes || facts.finding.isUnreadable ? "" : " (\(FindingWords.sentence(facts.finding)))")]
    }

    static func trustJSON(_ facts: TrustFacts) -> JSONValue {
        func because(_ a: TrustAnswer) -> JSONValue {
            if case .unknown(let b) = a { return .string(b) }
            return .null
        }
        return .object([
            ("store", .string(facts.store.description)),
            ("installed", .string(facts.installed.word)),
            ("installedBecause", because(facts.installed)),
            ("usable", .string(facts.usable.word)),
            ("usableBecause", because(facts.usable)),
            ("finding", .string(FindingWords.code(facts.finding))),
            ("findingText", .string(FindingWords.sentence(facts.finding))),
        ])
    }

    /// The runtimes that keep their own list, each with what makes it trust the root at `rootPath`.
    static func runtimeLines(rootPath: String) -> [String] {
        ["Programs that keep their own list of roots (trusting the store does not reach them):"]
            + RuntimeTrust.all.map { "  " + $0.line(rootPath: rootPath) }
            + ["  " + TrustGuides.forgetLacksRootStep]
    }

    static func guideLines(_ guide: TrustGuide) -> [String] {
        var lines = [guide.title + ":"]
        for (i, step) in guide.steps.enumerated() { lines.append("  \(i + 1). \(step)") }
        if let note = guide.note { lines.append("  Note: \(note)") }
        return lines
    }
}

extension TrustFinding {
    var isUnreadable: Bool {
        if case .unreadable = self { return true }
        return false
    }
}

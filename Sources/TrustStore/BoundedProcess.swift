import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with a time limit, capturing its output; standard input is
/// /dev/null, so a program that would ask a question fails instead of waiting forever.
public enum BoundedProcess {
    /// What a finished program said.
    public struct Result: Sendable, Equatable {
        /// The exit status (or 128 + signal number when killed by a signal).
        public let status: Int32
        public let stdout: [UInt8]
        public let stderr: [UInt8]
        /// The first non-empty line of standard error (or standard output), trimmed.
        public var firstErrorLine: String {
            for bytes in [stderr, stdout] {
                if let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
                    .map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { !$0.isEmpty }) {
                    return line
                }
            }
            return "no output"
        }
    }

    /// Why a program could not be run to the end.
    public enum Failure: Error, Sendable, Equatable {
        case notFound(program: String)
        case couldNotStart(program: String, reason: String)
        case timedOut(program: String, seconds: Double)

        /// A clause for people.
        public var reason: String {
            switch self {
            case .notFound(let p): return "\(p) is not installed (not found on PATH)"
            case let .couldNotStart(p, r): return "\(p) could not be started (\(r))"
            case let .timedOut(p, s): return "\(p) did not finish within \(Int(s)) seconds and was stopped"
            }
        }
    }

    /// Finds `program` on `PATH` (from `environment`, else the standard system folders).
    public static func locate(_ program: String, environment: [String: String]) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        let path = environment["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs `program` with `arguments`.
    /// - Parameters:
    ///   - environment: the child's environment (also used to find `program` on `PATH`).
    ///   - timeout: seconds before the child is killed (SIGKILL).
    /// - Throws: `Failure`.
    public static func run(_ program: String, _ arguments: [String], environment: [String: String],
                           timeout: Double = 30) throws -> Result {
        guard let path = locate(program, environment: environment) else { throw Failure.notFound(program: program) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw Failure.couldNotStart(program: program, reason: error.localizedDescription)
        }
        let outBytes = Collected()
        let errBytes = Collected()
        let group = DispatchGroup()
        let outHandle = out.fileHandleForReading
        let errHandle = err.fileHandleForReading
        DispatchQueue.global().async(group: group) { outBytes.set(outHandle.readDataToEndOfFile()) }
        DispatchQueue.global().async(group: group) { errBytes.set(errHandle.readDataToEndOfFile()) }
        let pid = process.processIdentifier
        if group.wait(timeout: .now() + timeout) == .timedOut {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            _ = group.wait(timeout: .now() + 2)
            throw Failure.timedOut(program: program, seconds: timeout)
        }
        process.waitUntilExit()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return Result(status: status, stdout: outBytes.bytes, stderr: errBytes.bytes)
    }

    /// Bytes handed from a reader thread to the waiting caller.
    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
        var bytes: [UInt8] { lock.lock(); defer { lock.unlock() }; return [UInt8](data) }
    }
}

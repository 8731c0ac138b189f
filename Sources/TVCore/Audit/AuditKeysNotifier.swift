import ControlChannel
import Foundation
import TVHome

/// How one running tv session answered `LiveAuditKeys.request` (issue 23): whose key log it
/// writes both legs' TLS secrets to now, and whether it inspects TLS; or why it could not follow.
public struct AuditKeysDelivery: Equatable, Sendable {
    public enum Outcome: Equatable, Sendable {
        /// It follows audit session `session` (nil: none) and does or does not inspect TLS now.
        case following(session: Int64?, inspecting: Bool)
        /// It did not answer, or could not follow: the reason, as a clause.
        case failed(reason: String)
    }

    /// The control socket it answered on.
    public let socket: String
    public let outcome: Outcome

    public init(socket: String, outcome: Outcome) {
        self.socket = socket
        self.outcome = outcome
    }

    /// A session's answer read (pure): `following` (an id or empty) and `inspection` (on/off) when
    /// ok; the answer's sentence, without its full stop, when not (an older tv does not know the
    /// request and says so).
    public static func reading(_ response: ControlResponse, socket: String) -> AuditKeysDelivery {
        guard response.ok, let following = response.values["following"] else {
            let reason = response.message.hasSuffix(".") ? String(response.message.dropLast()) : response.message
            return AuditKeysDelivery(socket: socket, outcome: .failed(reason: reason))
        }
        return AuditKeysDelivery(socket: socket, outcome: .following(session: Int64(following),
                                                                     inspecting: response.values["inspection"] == "on"))
    }
}

/// Tells every running tv session of a data folder that the live audit session changed (`tv audit
/// start`, `tv audit stop`): `tv run`'s control socket and each `tv exec`'s own socket
/// (`execSocket`), so each follows the live session's key log at once (`LiveAuditKeys`).
public enum AuditKeysNotifier {
    /// The socket a `tv exec` (process `pid`) answers audit changes on: `run/exec-PID.sock`.
    public static func execSocket(home: TVHome, pid: Int32) -> String { home.runDirectory + "/exec-\(pid).sock" }

    /// The sockets of the sessions running now: `tv run`'s control socket, then every
    /// `run/exec-*.sock` (sorted), whether or not anything still answers there.
    public static func sockets(home: TVHome) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: home.runDirectory)) ?? []
        let execs = names.filter { $0.hasPrefix("exec-") && $0.hasSuffix(".sock") }.sorted()
        return [SessionPaths.controlSocket(home)] + execs.map { home.runDirectory + "/" + $0 }
    }

    /// Asks each running session to follow the live audit session; the answers of those that
    /// run (a socket nothing listens on is left out: no session there, a `tv exec` killed before
    /// it could remove its own, which is removed here).
    public static func tellAll(home: TVHome) -> [AuditKeysDelivery] {
        sockets(home: home).compactMap { socket in
            guard let client = try? ControlClient(path: socket) else { return nil }
            do {
                return AuditKeysDelivery.reading(try client.send(LiveAuditKeys.request, timeoutSeconds: 2), socket: socket)
            } catch ControlError.notRunning {
                if socket != SessionPaths.controlSocket(home) { unlink(socket) }
                return nil
            } catch let error as UserFacingError {
                let reason = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
                return AuditKeysDelivery(socket: socket, outcome: .failed(reason: reason))
            } catch {
                return AuditKeysDelivery(socket: socket, outcome: .failed(reason: "\(error)"))
            }
        }
    }
}

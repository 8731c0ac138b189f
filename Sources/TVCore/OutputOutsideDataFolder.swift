import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// A command's `-o FILE` never lands inside the data folder: tv's own files live there (the CA's
/// key, settings, the database, captures, content), and `tv ca export --pem -o
/// $TV_HOME/ca/root-key.pem` replaced the root key with the certificate, for good (a re-check).
/// A new file there could also take a name tv makes later. The path's folder is resolved
/// (symbolic links, `..`) before it is compared.
public enum OutputOutsideDataFolder {
    /// Why `-o` was refused.
    public struct Refusal: UserFacingError, Equatable {
        public let path: String
        public let dataFolder: String
        public var message: String {
            "\(TerminalText.line(path)) is inside tv's data folder \(TerminalText.line(dataFolder)), among tv's own files; write it outside the data folder."
        }
    }

    /// Throws `Refusal` when `path` resolves to a place inside `home` (its folder, or any
    /// folder under it); a path whose folder does not exist is left to the writer's error.
    /// The path itself counts too when it exists (`tv ca export --android -o DIR` writes into
    /// a folder).
    public static func check(_ path: String, home: TVHome) throws {
        guard let data = resolved(home.path) else { return }
        let parent = PathText.folder(of: path)
        for place in [resolved(path), resolved(parent.isEmpty ? "." : parent)].compactMap({ $0 })
        where place == data || place.hasPrefix(data + "/") {
            throw Refusal(path: path, dataFolder: home.path)
        }
    }

    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }
}

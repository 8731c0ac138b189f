import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where in the data folder's path a trust problem was found.
public enum DataFolderPlace: Sendable, Equatable {
    /// The data folder itself.
    case dataFolder
    /// Its `ca/` folder (the root and its key).
    case caFolder
    /// A folder on the way to the data folder (`dataFolder` is the data folder's path).
    case above(dataFolder: String)
}

extension TVHome {
    /// Refuses a data folder another user could change: every command checks this before it
    /// reads or writes anything in `$TV_HOME` (`Invocation.home()`, `ensureExists()`,
    /// `requireExisting()`), so a CA or settings that someone else planted are never used.
    ///
    /// Checked (`FileTrust`): the data folder and its `ca/` must be yours and not writable by group
    /// or others; every folder above it (of the path as given and as resolved through symbolic
    /// links) must be yours or root's and not writable by others unless sticky. What does
    /// not exist yet is fine (tv makes it, 0700). Cost: one stat(2) per path component.
    /// - Throws: `TVHomeError.untrusted` naming the folder, the problem and the fix;
    ///   `TVHomeError.unreachable` when a folder on the way cannot be entered by this user.
    public func checkTrust() throws {
        if let file = TVHome.fileInTheWay(of: path) { throw TVHomeError.fileInTheWay(path: path, file: file) }
        let you = FileOwner.current
        var paths = [path]
        if let resolved = realpath(path, nil) {
            let real = String(cString: resolved)
            free(resolved)
            if real != path { paths.append(real) }
        }
        for target in paths {
            guard try TVHome.checkFoldersAbove(target, dataFolder: path, you: you) else { return }
        }
        for (folder, place) in [(path, DataFolderPlace.dataFolder), (caDirectory, .caFolder)] {
            switch FileFacts.stat(folder) {
            case .found(let facts):
                if let problem = FileTrust.ownFolder(facts, you: you) {
                    throw TVHomeError.untrusted(path: folder, place: place, problem: problem)
                }
            case .missing, .forbidden, .failed:
                // Made by tv when needed, or said by what reads it (CAFolder.load: "cannot be
                // read"); a data folder closed to this user was refused above.
                return
            }
        }
    }

    /// The first of `path` and the folders above it that is there but is not a folder (links
    /// followed); nil when none is (a trial's file given as --data-dir read "CA: none yet").
    static func fileInTheWay(of path: String) -> String? {
        // Prefixes of `path` as written, ending before each slash, then `path` itself.
        let prefixes = path.indices.filter { path[$0] == "/" && $0 != path.startIndex }.map { String(path[..<$0]) } + [path]
        for prefix in prefixes {
            switch FileFacts.stat(prefix) {
            case .found(let facts) where facts.kind != .directory: return prefix
            case .found: continue
            case .missing, .forbidden, .failed: return nil
            }
        }
        return nil
    }

    /// Checks the folders above `target`, top down; false when one is missing (nothing below it
    /// exists yet, so there is nothing more to check).
    private static func checkFoldersAbove(_ target: String, dataFolder: String, you: FileOwner) throws -> Bool {
        var above: [String] = ["/"]
        var prefix = ""
        for component in target.split(separator: "/").dropLast() {
            prefix += "/" + component
            above.append(prefix)
        }
        var entered: (path: String, owner: FileOwner)?
        for folder in above {
            switch FileFacts.stat(folder) {
            case .found(let facts):
                if let problem = FileTrust.folderAbove(facts, you: you) {
                    throw TVHomeError.untrusted(path: folder, place: .above(dataFolder: dataFolder), problem: problem)
                }
                entered = (folder, facts.owner)
            case .missing, .failed:
                return false
            case .forbidden:
                throw TVHomeError.unreachable(path: dataFolder, closedFolder: entered?.path ?? folder,
                                              owner: entered?.owner, you: you)
            }
        }
        if case .forbidden = FileFacts.stat(target) {
            throw TVHomeError.unreachable(path: dataFolder, closedFolder: entered?.path ?? target, owner: entered?.owner, you: you)
        }
        return true
    }
}

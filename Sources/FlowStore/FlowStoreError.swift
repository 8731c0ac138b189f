import CSQLite
#if canImport(Glibc)
import Glibc
#endif
import TVHome

/// Why the flow database could not be opened, read or written. Every case names the file and
/// says, in one sentence, what happened and what to do next.
public enum FlowStoreError: UserFacingError, Equatable {
    /// The file could not be opened or created (missing folder, permissions).
    case cannotOpen(path: String, reason: String)
    /// A file of the database could not be opened for want of a file descriptor (EMFILE,
    /// ENFILE): said as that, not as a folder to check (a trial's retention pass under
    /// `ulimit -n 32`).
    case tooManyOpenFiles(TooManyOpenFiles)
    /// The file is not an SQLite database or its pages are damaged (SQLITE_NOTADB, SQLITE_CORRUPT).
    case corrupt(path: String, reason: String)
    /// The file is missing but its write-ahead log (`-wal`) is there, holding what was written
    /// last: a new file would discard it, so none is made.
    case walWithoutDatabase(path: String)
    /// The file's `PRAGMA user_version` is newer than the schema this build knows.
    case newerSchema(path: String, found: Int, supported: Int)
    /// Another connection held a lock for longer than the busy timeout (SQLITE_BUSY, SQLITE_LOCKED).
    case busy(path: String)
    /// The disk is full (SQLITE_FULL, or an I/O error whose system error is ENOSPC or EDQUOT).
    case diskFull(path: String)
    /// The file or its folder is not writable (SQLITE_READONLY, SQLITE_PERM).
    case readOnly(path: String)
    /// Any other SQLite failure, with SQLite's own words in `reason`.
    case failed(path: String, reason: String)
    /// A `--after` cursor that `FlowCursor` did not produce.
    case badCursor(String)
    /// One row holds a value no writer writes; the rest of the file is readable.
    case damagedRow(path: String, DamagedRow)
    /// The shared store's server could not be reached or the connection was lost (libpq's
    /// words in `reason`; `server` is `host:port/database`).
    case sharedStoreUnreachable(server: String, reason: String)
    /// The shared store's server asked for a password and none was found (no password file
    /// entry for this server, database and user); libpq's words in `reason`.
    case sharedStoreNeedsPassword(server: String, reason: String)
    /// tv sent the shared store a password and the connection still failed (`PQconnectionUsedPassword`:
    /// the password is wrong, or the login was refused after it, e.g. no such database);
    /// libpq's words in `reason`. A session tries again seldom (`PostgresFlowBackend.retryDelay`).
    case sharedStoreLoginRefused(server: String, reason: String)

    /// The shared store's server refused a statement (its words in `reason`).
    case sharedStoreFailed(server: String, reason: String)
    /// A `--store` URL (or `store.url`) tv will not use: libpq cannot read it, or it holds a
    /// password (shown as `***`).
    case badStoreURL(url: String, reason: String)
    /// `tv flow ID --store` found the id in several instances' histories.
    case ambiguousSharedFlow(id: Int64, instances: [String])
    /// `--instance NAME` names no instance of the shared store at `server` (by id or machine).
    case noSuchInstance(name: String, server: String)
    /// `--instance NAME` is a machine name several instances carry (`labels`: `MACHINE/PREFIX`
    /// of each, which names one).
    case ambiguousInstance(name: String, labels: [String])
    /// The shared store at `server` was migrated by a newer tv (its `tv_schema` version).
    case sharedStoreNewerSchema(server: String, found: Int, supported: Int)
    /// The database at `server` has tables named as tv's that tv did not make (no `tv_schema`):
    /// `tables`, their names joined with ", ".
    case sharedStoreNotTvs(server: String, tables: String)

    public var message: String {
        switch self {
        case .tooManyOpenFiles(let shortage):
            return shortage.message
        case let .cannotOpen(path, reason):
            return "Could not open the flow database at \(path) (\(reason)); check that its folder exists and belongs to you, then try again."
        case let .corrupt(path, reason):
            return "The flow database at \(path) is corrupt (\(reason)); move it aside with its -wal and -shm files (all three together) and tv will start a new one, leaving the decrypted content already kept in the content folder untouched (tv content delete removes it)."
        case let .walWithoutDatabase(path):
            return "The flow database \(path) is missing, but its write-ahead log \(path)-wal is there and holds the flows written last; put the database file back, or move \(path)-wal and \(path)-shm aside as well (tv then starts a new history without them), and try again."
        case let .newerSchema(path, found, supported):
            return "The flow database at \(path) was written by a newer tv (schema version \(found), this tv knows up to \(supported)); upgrade tv, or move the file aside with its -wal and -shm files and tv will start a new one, leaving the decrypted content already kept in the content folder untouched (tv content delete removes it)."
        case let .busy(path):
            return "The flow database at \(path) is locked by another process; stop the other tv session or try again in a moment."
        case let .diskFull(path):
            return DataFolderFull.sentence(cannotGrow: path)
        case let .readOnly(path):
            return "The flow database at \(path) cannot be written; check that the file and its folder belong to you (file 0600, folder 0700) and try again."
        case let .failed(path, reason):
            return "The flow database at \(path) reported an error (\(reason)); try again, and if it keeps happening move the file aside with its -wal and -shm files and tv will start a new one, leaving the decrypted content already kept in the content folder untouched (tv content delete removes it)."
        case let .damagedRow(path, damage):
            return "The row of \(damage.row) in the flow database at \(path) is damaged (\(damage.column) is \(DamagedRow.words(damage.value))), so tv cannot show it; the other rows are unaffected."
        case let .sharedStoreUnreachable(server, reason):
            // Not only "unreachable": libpq says a refused login, a missing database or a
            // certificate that does not verify the same way (a trial read "check that the server
            // runs" under each); its reason says which.
            return "tv could not connect to the shared store at \(server) (\(reason)); check that the server runs, the URL's host, port, database, user and sslmode, and the password file's line for it, then try again."
        case let .sharedStoreNeedsPassword(server, reason):
            return "The shared store at \(server) asks for a password and tv found none (\(reason)); put it in a password file (PGPASSFILE, ~/.pgpass, or passfile= in the URL) for this server, database and user, then try again."
        case let .sharedStoreLoginRefused(server, reason):
            // Tried again every few seconds, a wrong password could lock the account where the
            // server counts failed logins: a running session tries it after 30 s, then at most
            // every 5 minutes.
            return "The shared store at \(server) refused tv's login with the password from the password file (\(reason)); correct that file's line for this server, database and user (a running session tries again after 30 s, then less and less often, at most 5 minutes apart)."
        case let .sharedStoreFailed(server, reason):
            return "The shared store at \(server) refused a write or read (\(reason)); check that the user may create and write tables in that database, then try again."
        case let .badStoreURL(url, reason):
            return "The store URL \(url) cannot be used: \(reason)."
        case let .noSuchInstance(name, server):
            return "The shared store at \(server) has no instance with the id or machine name '\(name)'; `tv store instances --store URL` lists them."
        case let .sharedStoreNewerSchema(server, found, supported):
            return "The shared store at \(server) was set up by a newer tv (schema version \(found), this tv knows up to \(supported)); upgrade tv on this machine to read or write it."
        case let .sharedStoreNotTvs(server, tables):
            return "The database at \(server) already has tables named as tv's (\(tables)) that tv did not make; give tv a database of its own (CREATE DATABASE tvhistory) and name it in the URL. Nothing in it was changed."
        case let .ambiguousInstance(name, labels):
            return "'\(name)' names \(labels.count) instances of the shared store (a machine name they carry, or the start of their ids); name one as \(labels.joined(separator: ", ")) (`tv store instances --store URL` lists them)."
        case let .ambiguousSharedFlow(id, instances):
            return "Flow \(id) is in the history of several instances (\(instances.joined(separator: ", "))); name one with --instance."
        case let .badCursor(cursor):
            return "The cursor '\(cursor)' is not one tv gave out; run the query again without --after."
        }
    }

    /// Maps an SQLite result code (primary or extended) and its message to a case.
    /// - Parameter systemErrno: `sqlite3_system_errno` of the failing call (0 when unknown): an
    ///   I/O error for want of space (writing the WAL or its index on a full disk) is `.diskFull`.
    static func from(code: Int32, message: String, path: String, systemErrno: Int32 = 0) -> FlowStoreError {
        if let shortage = TooManyOpenFiles(errno: systemErrno, opening: "the flow database at \(path)") {
            return .tooManyOpenFiles(shortage)
        }
        if code & 0xff == SQLITE_IOERR, systemErrno == ENOSPC || systemErrno == EDQUOT {
            return .diskFull(path: path)
        }
        switch code & 0xff {
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return .corrupt(path: path, reason: message)
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy(path: path)
        case SQLITE_FULL:
            return .diskFull(path: path)
        case SQLITE_READONLY, SQLITE_PERM:
            return .readOnly(path: path)
        case SQLITE_CANTOPEN:
            return .cannotOpen(path: path, reason: message)
        default:
            return .failed(path: path, reason: message)
        }
    }
}

extension FlowStoreError {
    /// What a failed open(2) of `path` with `code` means: `.tooManyOpenFiles` for EMFILE and
    /// ENFILE (`what` names the file in its sentence: `the flow database at PATH` unless given),
    /// else `.cannotOpen` with strerror's text.
    static func opening(_ code: Int32, path: String, what: String? = nil) -> FlowStoreError {
        if let shortage = TooManyOpenFiles(errno: code, opening: what ?? "the flow database at \(path)") {
            return .tooManyOpenFiles(shortage)
        }
        return .cannotOpen(path: path, reason: String(cString: strerror(code)))
    }

    /// 2 for a cursor that is not one tv gave out (the command was asked wrongly: a usage error,
    /// and tv web's 400, not its 404 for a thing that does not exist: a trial), else 1.
    public var exitCode: Int32 {
        if case .badCursor = self { return 2 }
        return 1
    }

    /// The shared store's connection could not be made (`sharedStoreUnreachable`,
    /// `sharedStoreNeedsPassword`, `sharedStoreLoginRefused`): a session starts anyway and
    /// retries (`FlowWriter`).
    public var isConnectionRefusal: Bool {
        switch self {
        case .sharedStoreUnreachable, .sharedStoreNeedsPassword, .sharedStoreLoginRefused: return true
        default: return false
        }
    }
}

extension FlowStoreError: DataFolderFullSaying {
    /// `.diskFull`'s sentence with `wayOn` (`DataFolderFull.wayOn(_:)`); nil for the rest.
    public func fullDiskMessage(wayOn: String) -> String? {
        guard case let .diskFull(path) = self else { return nil }
        return DataFolderFull.sentence(cannotGrow: path, wayOn: wayOn)
    }
}

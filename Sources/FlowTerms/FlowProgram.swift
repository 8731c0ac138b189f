/// The local program behind a flow: the process holding the client's socket when tv looked, or why
/// that is not known. Stored in the flow database's `program_*` columns (one row each flow).
public enum FlowProgram: Sendable, Hashable {
    /// The process was found: its socket's owner on this machine (or inside `tv exec`'s namespace).
    case known(ProgramIdentity)
    /// No process can be named, for one reason.
    case notKnown(ProgramUnknown)
}

/// Who held a flow's client socket: a process on this machine, read from `/proc/PID` and the
/// kernel's socket table at the moment tv looked.
public struct ProgramIdentity: Sendable, Hashable {
    /// The process id (in this machine's PID namespace).
    public var pid: Int32
    /// The command name the kernel keeps (`/proc/PID/comm`, at most 15 bytes: `curl`, `python3`).
    public var command: String
    /// The executable's path (`/proc/PID/exe`: `/usr/bin/curl`); nil when it could not be read
    /// (a kernel thread, or a process tv may not inspect).
    public var executable: String?
    /// The socket owner's user id (the kernel's `idiag_uid`: the effective user when the socket
    /// was made).
    public var uid: UInt32
    /// The user's name for `uid` (the passwd database); nil when it has none.
    public var user: String?

    public init(pid: Int32, command: String, executable: String?, uid: UInt32, user: String?) {
        self.pid = pid
        self.command = command
        self.executable = executable
        self.uid = uid
        self.user = user
    }

    /// The executable's file name (`python3.11` of `/usr/bin/python3.11`); nil when not read.
    public var executableName: String? {
        executable.flatMap { $0.split(separator: "/").last.map(String.init) }
    }

    /// Whether `command` names another program than the executable runs: neither begins with the
    /// other (the kernel cuts a command to 15 bytes, and `python3` runs `python3.11`). A process
    /// sets its own command (prctl PR_SET_NAME: a python that called itself `curl` was listed as
    /// curl, a trial); a script's is its file name (`bash` runs `backup.sh`).
    public var commandDisagrees: Bool {
        guard let name = executableName, !name.isEmpty, !command.isEmpty else { return false }
        return !name.hasPrefix(command) && !command.hasPrefix(name)
    }

    /// The name the kernel keeps for a command of `name`: its first 15 bytes (TASK_COMM_LEN is
    /// 16 with the NUL; a UTF-8 sequence cut there stays cut, as the kernel keeps it).
    public static func kernelCommand(_ name: String) -> String {
        let bytes = Array(name.utf8)
        guard bytes.count > 15 else { return name }
        return String(decoding: bytes.prefix(15), as: UTF8.self)
    }
}

/// Why a flow's program is not known. Stored as the raw value in `program_unknown`.
public enum ProgramUnknown: String, Sendable, Hashable, CaseIterable {
    /// The client's address is not one of this machine's: the program runs elsewhere.
    case otherMachine = "other_machine"
    /// The client's socket was already gone from the kernel's table (or closing, with no owner)
    /// when tv looked: a short-lived program that finished first.
    case socketGone = "socket_gone"
    /// The socket was there, but no process held it any more by the time tv read `/proc`: the
    /// program had closed it (a resolver's query socket, one answer later) or exited. The words
    /// said only "exited", of a curl that went on to open its next connection (a trial).
    case processGone = "process_gone"
    /// A process holds the socket, but tv may not read its descriptors (tv runs without the
    /// privilege to look at other users' processes).
    case notVisible = "not_visible"
    /// More than one socket matched the client's address and port: tv will not guess.
    case ambiguous
    /// The kernel's socket table could not be asked (no sock_diag, or it did not answer in time).
    case lookupFailed = "lookup_failed"
    /// tv did not look: too many lookups were waiting (counted), or the flow was recorded by a
    /// tv without this lookup.
    case notLookedUp = "not_looked_up"

    /// The reason in words, for `tv flow` ("not known: …").
    public var phrase: String {
        switch self {
        case .otherMachine: return "the client is on another machine"
        case .socketGone: return "the client's socket was gone before tv looked (closed at once, as a one-off lookup's is; its program may still run)"
        case .processGone: return "no program held the client's socket any more when tv looked (closed within a few ms, or its program exited)"
        case .notVisible: return "tv may not read that process (run tv as root to see other users' programs)"
        case .ambiguous: return "more than one socket had the client's address and port"
        case .lookupFailed: return "the kernel's socket table did not answer"
        case .notLookedUp: return "tv did not look it up"
        }
    }
}

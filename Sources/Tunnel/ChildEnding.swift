/// How a child process ended (wait(2)'s status read): it exited with a code, or a signal
/// killed it. `tv exec` says which ("curl was killed by SIGKILL (9)"), and exits as a shell
/// would: the code, or 128 + the signal.
public enum ChildEnding: Sendable, Equatable {
    case exited(code: Int32)
    case killed(signal: Int32)

    /// The exit code a shell gives for it: the code, or 128 + the signal (bash(1), EXIT STATUS).
    public var exitCode: Int32 {
        switch self {
        case .exited(let code): return code
        case .killed(let signal): return 128 + signal
        }
    }

    /// "SIGKILL (9)", "SIGRTMIN+3 (37)", "signal 99" for one Linux does not name.
    public static func signalName(_ signal: Int32) -> String {
        if signal >= 1, signal < names.count + 1 { return "SIG\(names[Int(signal) - 1]) (\(signal))" }
        if signal >= 34, signal <= 64 { return (signal == 34 ? "SIGRTMIN" : "SIGRTMIN+\(signal - 34)") + " (\(signal))" }
        return "signal \(signal)"
    }

    /// Linux's signal names 1 to 31, in number order (signal(7), x86 and ARM alike).
    static let names = ["HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM",
                        "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF",
                        "WINCH", "IO", "PWR", "SYS"]
}

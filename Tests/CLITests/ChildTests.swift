import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tests' own process runner (`Child`): what made Foundation's `Process` hang a CI run.
@Suite("Child: the programs tests start")
struct ChildTests {
    @Test("a shell that leaves a background process behind has ended when it exits (Foundation's Process waited for the background one)")
    func backgroundGrandchildDoesNotKeepTheParentAlive() throws {
        let finished = Child.run("/bin/sh", ["-c", "sleep 60 & echo $!"], environment: ProcessInfo.processInfo.environment, timeout: 20)
        defer { if let pid = Int32(String(decoding: finished.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) { kill(pid, SIGKILL) } }
        #expect(!finished.timedOut)
        #expect(finished.status == 0 && !finished.signaled)
        #expect(Int32(String(decoding: finished.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) != nil)
    }

    @Test("a descriptor the tests hold without close-on-exec is not the child's; 0, 1 and 2 are")
    func nothingPastTwoIsInherited() throws {
        let held = open("/dev/null", O_RDONLY)  // no O_CLOEXEC: what Foundation's own pipes and sockets are
        defer { close(held) }
        #expect(held > 2)
        let finished = Child.run("/bin/sh", ["-c", "for fd in 0 1 2 \(held); do [ -e /proc/self/fd/$fd ] && echo $fd; done; true"],
                                 environment: ProcessInfo.processInfo.environment, timeout: 20)
        #expect(String(decoding: finished.stdout, as: UTF8.self) == "0\n1\n2\n")
    }

    @Test("exit codes and signals as Foundation's terminationStatus has them; a missing program is a start failure")
    func statuses() throws {
        let env = ProcessInfo.processInfo.environment
        #expect(Child.run("/bin/sh", ["-c", "exit 3"], environment: env, timeout: 20).status == 3)
        let killed = Child.run("/bin/sh", ["-c", "kill -TERM $$"], environment: env, timeout: 20)
        #expect(killed.status == SIGTERM && killed.signaled)
        let missing = Child.run("no-such-program-tv", [], environment: env, timeout: 20)
        #expect(missing.status == -1 && missing.startFailure?.description == "no-such-program-tv is not installed (Scripts/test installs it)")
        let stopped = Child.run("/bin/sleep", ["30"], environment: env, timeout: 0.2)
        #expect(stopped.timedOut && stopped.status == SIGKILL && stopped.signaled)
    }
}

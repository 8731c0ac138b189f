import Glibc
import Testing
@testable import TVCore

@Suite struct ExecLeftoversTests {
    @Test("only exec-PID.sock and exec-PID.resolv.conf of a gone pid are stale; live ones, other names and odd pids stay")
    func stale() {
        let names = ["exec-8203.sock", "exec-8203.resolv.conf", "exec-77.sock", "control.sock", "exec-.sock", "exec-12x.sock",
                     "exec-8203.resolv.conf.bak", "resolv.conf", "exec-0.sock", "exec-99999999999.sock"]
        #expect(ExecLeftovers.stale(names, isAlive: { $0 == 77 }) == ["exec-8203.sock", "exec-8203.resolv.conf"])
        #expect(ExecLeftovers.stale(names, isAlive: { _ in true }).isEmpty)
    }

    @Test("this process is alive; a pid past pid_max is not")
    func liveness() {
        #expect(ExecLeftovers.processExists(getpid()))
        #expect(!ExecLeftovers.processExists(4_194_304 + 1))
    }
}

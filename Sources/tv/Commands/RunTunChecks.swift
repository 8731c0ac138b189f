import ControlChannel
import TVCore
import TVHome
import Tunnel

/// What `tv run --mode tun` would meet now, for its dry run, its real run and `tv status`: the
/// refusals a start meets, and what a killed whole-host session left behind.
extension RunCommands {
    /// What a killed `tv run --mode tun` left in place, and what removes it: its routing rules
    /// (both families: `HostRoutingPlan`) and, when it had loosened it, rp_filter (the sentence
    /// said "its routing rule" alone: a re-check).
    static func leftRoutingSentence(_ left: HostTunnelClaim.Record) -> String {
        let rp = left.rpFilterWas.map { " and net.ipv4.conf.all.rp_filter at 2 (it was \(TerminalText.line($0)))" } ?? ""
        return "A `tv run --mode tun` (pid \(left.pid), data folder \(TerminalText.line(left.dataFolder))) was killed and left its routing rules for \(TerminalText.line(left.device))\(rp) in place: the connections it carried are gone (a download through it hangs until its own timeout), and the next `tv run` or `tv exec` on this host removes them."
    }

    /// What refuses `tv run --mode tun` now, in the order a real run meets them: missing
    /// privileges (unless `privileges` is false), another whole-host session (any data folder),
    /// and, given `home`, a session of this data folder (a real run finds it when it binds the
    /// control socket).
    static func tunRefusalsNow(home: TVHome?, privileges: Bool = true) -> [any UserFacingError] {
        var refusals: [any UserFacingError] = []
        let missing = privileges ? Privileges.missing([Privileges.netAdmin]) : []
        if !missing.isEmpty {
            refusals.append(TunnelError.needsPrivileges(command: "tv run --mode tun", missing: missing.joined(separator: " and "),
                                                        purpose: "to make a TUN device and route this host's traffic through it"))
        }
        if let refusal = HostTunnelClaim.refusalNow() { refusals.append(refusal) }
        if let home {
            do { try ControlServer.refuseIfLive(path: SessionPaths.controlSocket(home)) } catch let error as any UserFacingError { refusals.append(error) } catch {}
        }
        return refusals
    }
}

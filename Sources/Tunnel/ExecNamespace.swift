import CTVShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// The world `tv exec` makes for its command (tun-nat.md shape A): a new network namespace and
/// a private mount namespace on a dedicated thread, a TUN inside as the default route (IPv4 and,
/// when the kernel allows, IPv6), the listeners inside, and `/etc/resolv.conf` replaced — for
/// that thread and its children only — by one naming the tunnel's DNS address.
///
/// Nothing outside changes: the namespace is anonymous (no `/run/netns` entry), the host's
/// resolv.conf is untouched. `close()` closes the TUN and the listeners and ends the thread; the
/// namespace disappears with its last reference (its processes included: `killRemaining`).
public final class ExecNamespace: Sendable {
    public let thread: NamespaceThread
    public let tunFD: Int32
    /// How `tunFD` was opened (virtio-net header and offloads, or plain and why).
    public let tunOffload: TUNOffload
    public let listeners: TunnelListeners
    /// The plan as applied (`address6` is nil when IPv6 could not be set up).
    public let plan: TunnelAddressPlan
    /// The commands that configured it.
    public let transcript: [String]

    /// Makes the namespace. `resolvConfPath` is a file (outside) holding `plan.resolvConf`.
    /// - Throws: `TunnelError` (namespace, TUN, configuration, listener); nothing is left behind.
    /// `offloadWanted`: open the TUN with IFF_VNET_HDR and checksum/TSO offload when the kernel
    /// takes it (`TUNDevice.open`); false for the plain mode.
    public init(plan requested: TunnelAddressPlan, resolvConfPath: String, offloadWanted: Bool = true) throws {
        let thread = try NamespaceThread(name: "tv-exec-netns", newMountNamespace: true)
        do {
            let (fd, offload, plan, listeners, transcript) = try thread.run { () throws -> (Int32, TUNOffload, TunnelAddressPlan, TunnelListeners, [String]) in
                var plan = requested
                var config = NetworkConfigurator()
                let bound = tv_bind_mount(resolvConfPath, "/etc/resolv.conf")
                guard bound == 0 else {
                    throw TunnelError.namespace(step: "put the tunnel's resolv.conf in place", reason: Errno(-bound).phrase)
                }
                let (fd, name, offload) = TUNDevice.open(name: plan.deviceName, offload: offloadWanted)
                guard fd >= 0 else { throw TunnelError.cannotOpenTUN(reason: Errno(-fd).phrase) }
                do {
                    plan.deviceName = name
                    let dev = plan.deviceName
                    try config.ip(["link", "set", "lo", "up"])
                    // No Router Solicitations / autoconfiguration on the TUN (they would only be dropped).
                    config.sysctl(NetworkConfigurator.interfaceKey("ipv6", dev, "accept_ra"), "0")
                    config.sysctl(NetworkConfigurator.interfaceKey("ipv6", dev, "router_solicitations"), "0")
                    try config.ip(["link", "set", "dev", dev, "mtu", String(plan.mtu), "txqueuelen", String(plan.txQueueLength)])
                    try config.ip(["addr", "add", plan.cidr4, "dev", dev])
                    try config.ip(["link", "set", "dev", dev, "up"])
                    try config.ip(["route", "add", "default", "dev", dev])
                    if let cidr6 = plan.cidr6 {
                        if !(config.tryIP(["-6", "addr", "add", cidr6, "dev", dev, "nodad"])
                             && config.tryIP(["-6", "route", "add", "default", "dev", dev])) {
                            plan.address6 = nil  // IPv6 is off in this kernel: IPv4 only.
                        }
                    }
                    let listeners = try TunnelListeners.open(plan: plan)
                    return (fd, offload, plan, listeners, config.transcript)
                } catch {
                    Glibc.close(fd)
                    throw error
                }
            }
            self.thread = thread
            tunFD = fd
            tunOffload = offload
            self.plan = plan
            self.listeners = listeners
            self.transcript = transcript
        } catch {
            thread.stop()
            throw error
        }
    }

    /// Starts `arguments` inside (network + mount namespace), with `environment`, sharing our
    /// standard streams and foreground process group (so Ctrl-C reaches it). It gets SIGTERM
    /// when the namespace thread ends (`ChildProcess.spawn(endsWithCaller:)`): at `close`, or
    /// when tv is killed.
    public func spawn(_ arguments: [String], environment: [String: String]) throws -> pid_t {
        try thread.run { try ChildProcess.spawn(arguments, environment: environment, endsWithCaller: true) }
    }

    /// Processes still in the namespace (a daemon the command left behind), by pid.
    public func remainingProcesses() -> [pid_t] {
        ExecNamespaceGuard.processes(in: thread.networkNamespaceInode)
    }

    /// Kills what the command left running inside (SIGKILL): the namespace must go.
    /// Returns the command names (`/proc/PID/comm`, read before the kill) of those there were,
    /// in pid order: what they are, not the command tv ran (a trial's leftover `sleep` was said
    /// as `sh`).
    @discardableResult
    public func killRemaining() -> [String] {
        guard !remainingProcesses().isEmpty else { return [] }
        // A child CMD forked just before it exited may not have exec'd its program yet (still
        // named as its parent: a re-check's `sh -c 'sleep 50 & exit 0'` said `sh` one time in
        // four); 50 ms lets it, and costs only an exit that leaves processes behind.
        usleep(50_000)
        let pids = remainingProcesses().sorted()
        let names = pids.map { pid in
            ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for pid in pids { kill(pid, SIGKILL) }
        return names.map { $0.isEmpty ? "?" : $0 }
    }

    /// The sentence for `killRemaining`'s names, nil for none: "1 process (sleep) left running
    /// inside the namespace was stopped", names counted once each ("sleep ×2, python3").
    public static func leftoverSentence(_ names: [String]) -> String? {
        guard !names.isEmpty else { return nil }
        var order: [String] = []
        var counts: [String: Int] = [:]
        for name in names {
            if counts[name] == nil { order.append(name) }
            counts[name, default: 0] += 1
        }
        let listed = order.map { counts[$0]! > 1 ? "\($0) ×\(counts[$0]!)" : $0 }.joined(separator: ", ")
        let n = names.count
        return "\(n) process\(n == 1 ? "" : "es") (\(listed)) left running inside the namespace \(n == 1 ? "was" : "were") stopped"
    }

    /// Closes the listeners and the TUN and ends the namespace thread.
    public func close() {
        listeners.close()
        Glibc.close(tunFD)
        thread.stop()
    }
}

import Foundation
import Testing

/// `tv service install|remove` (issue 22) under a real systemd, on a machine (this one, CI) where
/// systemd is not PID 1: systemd boots as PID 1 of new PID, mount, network, UTS, IPC and cgroup
/// namespaces over a `ScratchRoot` copy of `/` (what nspawn does, with the host's own files), in
/// a cgroup of its own that is removed afterwards. Nothing of the machine changes: the copy's
/// writes are a tmpfs, its /sys and /proc/sys are read-only, its /dev holds no disks, it may not
/// load modules or set the clock, it boots only an empty target (no udev, no sysctl, no mounts
/// from fstab) and starts journald and what the test asks for. About ten seconds.
@Suite("CLI: tv service under systemd as PID 1 of a namespace (issue 22)", .serialized,
       .enabled(if: getuid() == 0, "needs root for namespaces and a cgroup"),
       .enabled(if: !ServiceCLITests.systemdRunning, "systemd runs this machine: ServiceCLITests' real service test starts it there"))
struct ServiceSystemdTests {
    @Test("service install starts tv (enabled, active, data folder 0700, records a request); a SIGKILL restarts it and the journal has its sentence on the interrupted flow; stop is clean; remove removes the unit",
          .timeLimit(.minutes(5)))
    func installRestartStopRemove() throws {
        try withSandbox { s in
            let tv = try TVBinary.require()
            let port = freeLoopbackPort()
            let cgroup = "tv-test-" + (s.root as NSString).lastPathComponent
            // In the booted copy: the commands whose output the test compares print to stdout,
            // the rest to stderr (shown when the test fails).
            _ = try s.write("steps.sh", """
                set -eu
                cd /
                data=/var/lib/tunnelvision
                flows() { tv --data-dir $data flows --json | python3 -c 'import json,sys; print(" ".join(f["status"] for f in json.load(sys.stdin)["flows"]))'; }
                ready() { for i in $(seq 100); do tv --data-dir $data status >/dev/null 2>&1 && return; sleep 0.1; done; }
                systemctl start systemd-journald.service >&2
                tv service install --yes >&2
                systemctl is-enabled tv.service
                systemctl is-active tv.service
                ready
                stat -c %a $data
                python3 -m http.server --bind 127.0.0.1 \(port) >/dev/null 2>&1 & server=$!
                for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:\(port)/ && break; sleep 0.1; done
                curl -sS -o /dev/null -w '%{http_code}\\n' -x http://127.0.0.1:8080 http://127.0.0.1:\(port)/
                # A tunnel held open while the service is killed: the restarted one closes its flow
                # as interrupted and says so, into the journal.
                python3 -c 'import socket,sys,time; s=socket.create_connection(("127.0.0.1",8080)); s.sendall(("CONNECT 127.0.0.1:%s HTTP/1.1\\r\\n\\r\\n" % sys.argv[1]).encode()); print(s.recv(100).split(b"\\r\\n")[0].decode(), flush=True); time.sleep(60)' \(port) & holder=$!
                for i in $(seq 100); do [ "$(flows | wc -w)" = 2 ] && break; sleep 0.1; done
                kill -9 "$(systemctl show -p MainPID --value tv.service)"
                for i in $(seq 100); do [ "$(systemctl show -p NRestarts --value tv.service)" = 1 ] && [ "$(systemctl is-active tv.service)" = active ] && break; sleep 0.1; done
                kill -9 $holder $server
                systemctl show -p NRestarts --value tv.service
                systemctl is-active tv.service
                ready
                systemctl stop tv.service
                systemctl show -p Result --value tv.service
                systemctl is-active tv.service || true
                journalctl -u tv.service -o cat > /tmp/journal.txt
                cat /tmp/journal.txt >&2
                grep -c '^tv: 1 flow left open by an earlier tv session that ended without stopping (killed or crashed) is now closed as interrupted' /tmp/journal.txt
                flows
                tv service remove --yes >&2
                [ ! -e /etc/systemd/system/tv.service ] && echo "unit removed"
                """)
            // PID 1 of the namespaces: mounts the copy, then becomes systemd.
            _ = try s.write("pid1.sh", """
                set -eu
                \(ScratchRoot.mountLines(folder: s.root + "/scratch", hideSwift: false))
                mount -t tmpfs -o mode=0755 tmpfs "$r/sys/fs/cgroup"
                if [ "$1" = unified ]; then mount -t cgroup2 cgroup2 "$r/sys/fs/cgroup"
                else
                    mkdir "$r/sys/fs/cgroup/systemd" "$r/sys/fs/cgroup/unified"
                    mount -t cgroup -o none,name=systemd cgroup "$r/sys/fs/cgroup/systemd"
                    mount -t cgroup2 cgroup2 "$r/sys/fs/cgroup/unified"
                fi
                : > '\(s.work)/console.log'; touch "$r/dev/console"; mount --bind '\(s.work)/console.log' "$r/dev/console"
                ip link set lo up
                install -m 0755 '\(tv)' "$r/usr/local/bin/tv"
                cp '\(s.work)/steps.sh' "$r/tmp/steps.sh"
                # Boot nothing but an empty target: no udev, sysctl, modules, fstab mounts or sockets.
                rm -f "$r"/lib/systemd/system/sysinit.target.wants/* "$r"/etc/systemd/system/sysinit.target.wants/* "$r"/lib/systemd/system/sockets.target.wants/*
                printf '[Unit]\\nDescription=tv test: only what the test starts\\n' > "$r/etc/systemd/system/tv-test.target"
                exec chroot "$r" /usr/bin/setpriv --bounding-set -sys_module,-sys_time,-sys_boot,-sys_rawio,-mknod \\
                    /usr/bin/env -i container=tv-test /lib/systemd/systemd --unit=tv-test.target
                """)
            // On the machine: a cgroup of its own per hierarchy systemd uses, the namespaces, the
            // steps run inside with nsenter, then PID 1 killed (which ends the namespace) and the
            // cgroups removed, whatever happened.
            let driver = try s.write("driver.sh", """
                set -eu
                cg='\(cgroup)'
                if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then layout=unified; hier=(/sys/fs/cgroup)
                else layout=hybrid; hier=(/sys/fs/cgroup/systemd /sys/fs/cgroup/unified); fi
                boot="" pid1=""
                cleanup() {
                    [ -z "$pid1" ] || kill -9 "$pid1" 2>/dev/null || true
                    [ -z "$boot" ] || wait "$boot" 2>/dev/null || true
                    for h in "${hier[@]}"; do
                        for i in $(seq 50); do
                            [ -d "$h/$cg" ] || break
                            find "$h/$cg" -depth -type d -exec rmdir {} + 2>/dev/null || sleep 0.1
                        done
                        [ ! -d "$h/$cg" ] || echo "could not remove the cgroup $h/$cg" >&2
                    done
                }
                trap cleanup EXIT
                for h in "${hier[@]}"; do mkdir "$h/$cg"; done
                bash -c 'for h in "${@:2}"; do echo $$ > "$h/cgroup.procs"; done
                    exec unshare --cgroup --pid --fork --mount --uts --ipc --net --propagation private bash "$1" "$0"' \\
                    "$layout" '\(s.work)/pid1.sh' "${hier[@]/%//$cg}" &
                boot=$!
                for i in $(seq 300); do
                    pid1=$(pgrep -P "$boot" | head -1 || true)
                    [ -n "$pid1" ] && [ -S "/proc/$pid1/root/run/systemd/private" ] && break
                    sleep 0.1
                done
                [ -S "/proc/$pid1/root/run/systemd/private" ] || { echo "systemd did not start; its console:" >&2; cat '\(s.work)/console.log' >&2; exit 1; }
                cd /
                nsenter --target "$pid1" --mount --pid --uts --ipc --net --cgroup --root --wd=/ \\
                    /usr/bin/env -i \(ScratchRoot.environment) bash /tmp/steps.sh
                """)
            let result = try s.tool("bash", [driver], timeout: 100)
            #expect(result.status == 0, "\(result)")
            #expect(result.out == """
                enabled
                active
                700
                200
                HTTP/1.1 200 Connection established
                1
                active
                success
                inactive
                1
                interrupted not_encrypted
                unit removed

                """, "\(result)")
            // The machine's own systemd folders never saw the unit.
            #expect(!FileManager.default.fileExists(atPath: "/etc/systemd/system/tv.service"))
        }
    }
}

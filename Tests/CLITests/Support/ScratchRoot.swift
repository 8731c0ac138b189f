import Foundation

/// A throwaway copy of this machine for tests that install packages or run systemd as PID 1:
/// bash that mounts an overlay of `/` whose writes land in a tmpfs, so `apt-get install`, unit
/// files and `/var/lib` change only that copy and vanish with the mount namespace. Run the lines
/// in a private mount namespace (`unshare --mount --propagation private`), as root.
///
/// The copy gets fresh `/proc` (its `/proc/sys` read-only), a read-only `/sys`, a small `/dev`
/// (null, zero, full, random, urandom, tty, its own pts and shm; never the machine's disks), empty
/// tmpfs `/tmp` and `/run`, and with `hideSwift` an empty `/opt/swift` (no Swift toolchain).
/// Only the root file system is copied: other mounts (a separate /home, say) look empty.
enum ScratchRoot {
    /// The bash lines; afterwards `$r` names the copy's root. `folder` (made here) holds the
    /// tmpfs with the overlay's layers and the root.
    static func mountLines(folder: String, hideSwift: Bool) -> String {
        """
        mkdir -p '\(folder)'
        mount -t tmpfs -o mode=0755 tmpfs '\(folder)'
        mkdir '\(folder)/upper' '\(folder)/work' '\(folder)/root'
        mount -t overlay overlay -o 'lowerdir=/,upperdir=\(folder)/upper,workdir=\(folder)/work' '\(folder)/root'
        r='\(folder)/root'
        mount -t proc proc "$r/proc"
        mount --bind "$r/proc/sys" "$r/proc/sys"; mount -o remount,bind,ro "$r/proc/sys"
        mount -t sysfs -o ro sysfs "$r/sys"
        mount -t tmpfs -o mode=0755 tmpfs "$r/dev"
        for n in null zero full random urandom tty; do touch "$r/dev/$n"; mount --bind "/dev/$n" "$r/dev/$n"; done
        mkdir "$r/dev/pts" "$r/dev/shm"
        mount -t devpts -o newinstance,ptmxmode=0666 devpts "$r/dev/pts"; ln -s pts/ptmx "$r/dev/ptmx"
        mount -t tmpfs tmpfs "$r/dev/shm"
        mount -t tmpfs tmpfs "$r/run"; mount -t tmpfs tmpfs "$r/tmp"
        \(hideSwift ? #"mkdir -p "$r/opt/swift"; mount -t tmpfs tmpfs "$r/opt/swift""# : "")
        """
    }

    /// The environment a command in the copy starts with (`env -i` then these).
    static let environment = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"
}

import CTVShims
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// Opens the TUN device the engine reads: with `IFF_VNET_HDR` and checksum/TSO offload when the
/// kernel takes it (so locally made TCP reaches tv with its checksum unfinished and leaves it the
/// same way: no software checksum on either side), else plain as before.
public enum TUNDevice {
    /// What `open` asks TUNSETOFFLOAD for: TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 (no UFO/USO: the
    /// engine does not cut UDP GSO packets, so the kernel segments UDP before the TUN).
    public static var wantedOffloads: UInt32 { tv_TUN_F_CSUM | tv_TUN_F_TSO4 | tv_TUN_F_TSO6 }

    /// Opens `/dev/net/tun` as interface `name` (non-blocking, close-on-exec).
    /// - Parameter offload: try the virtio-net header and `wantedOffloads`; when any of those
    ///   ioctls fails the device is opened plain and `TUNOffload.unavailableReason` says why.
    /// - Returns: the fd, the kernel's name for the interface, and the mode it is in; or the
    ///   errno of the plain open (`-errno`) in `fd` when even that failed.
    public static func open(name: String, offload: Bool = true) -> (fd: Int32, name: String, offload: TUNOffload) {
        var actual = [CChar](repeating: 0, count: 16)
        var reason: String?
        if offload {
            var step: Int32 = 0
            let fd = tv_tun_open_offload(name, &actual, Int32(TUNOffload.requestedHeaderSize), wantedOffloads, &step)
            if fd >= 0 {
                return (fd, decode(actual), TUNOffload(headerSize: TUNOffload.requestedHeaderSize, offloads: wantedOffloads))
            }
            let call = ["TUNSETIFF with IFF_VNET_HDR", "TUNSETVNETHDRSZ", "TUNSETVNETLE", "TUNSETOFFLOAD"][max(0, min(3, Int(step) - 1))]
            reason = "\(call) failed: \(Errno(-fd).phrase)"
            actual = [CChar](repeating: 0, count: 16)
        }
        let fd = tv_tun_open(name, &actual)
        return (fd, fd >= 0 ? decode(actual) : name, TUNOffload(headerSize: 0, offloads: 0, unavailableReason: reason))
    }

    private static func decode(_ name: [CChar]) -> String {
        String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// Linux bits the TUN front-end, `tv exec` and the transparent mode need that Swift's Glibc
// module does not expose: TUNSETIFF (an _IOW ioctl), namespaces (unshare/setns/mount), SO_MARK,
// SO_BINDTODEVICE, SO_ORIGINAL_DST for IPv6, posix_spawn with default signal dispositions, the
// wait-status macros, and signal forwarding to a child that runs in the foreground.
#ifndef CTVTUNNELSHIMS_H
#define CTVTUNNELSHIMS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>

/// Opens /dev/net/tun (O_RDWR | O_CLOEXEC | O_NONBLOCK) and attaches it to interface `name` with
/// IFF_TUN | IFF_NO_PI (one raw IP packet per read/write). Writes the kernel's name for it into
/// `actual` (16 bytes). Returns the fd, or -errno.
int tv_tun_open(const char *name, char actual[16]);
/// Opens the TUN like `tv_tun_open`, with IFF_VNET_HDR as well: every read then starts with a
/// `struct virtio_net_hdr` (little-endian, TUNSETVNETLE) padded to `header_size` bytes
/// (TUNSETVNETHDRSZ; 10 or 12), and every write must carry one; `offloads` (TUN_F_* bits) go to
/// TUNSETOFFLOAD. Returns the fd, or -errno with *failed_step saying which call failed
/// (1 TUNSETIFF, 2 TUNSETVNETHDRSZ, 3 TUNSETVNETLE, 4 TUNSETOFFLOAD); on failure nothing is left
/// open (the interface is gone again), so `tv_tun_open` can be tried with the same name.
int tv_tun_open_offload(const char *name, char actual[16], int header_size, unsigned offloads, int *failed_step);
/// TUN_F_CSUM, TUN_F_TSO4, TUN_F_TSO6 (linux/if_tun.h).
extern const unsigned tv_TUN_F_CSUM, tv_TUN_F_TSO4, tv_TUN_F_TSO6;
/// Names the calling thread for the kernel (comm: /proc/PID/task/TID/comm, top -H, perf); at most
/// 15 bytes are kept (a longer name is cut, not refused). Returns 0 or an errno value (pthread_setname_np).
int tv_set_thread_name(const char *name);

/// unshare(2) / setns(2); 0 or -errno.
int tv_unshare(int flags);
int tv_setns(int fd, int nstype);
extern const int tv_CLONE_NEWNET, tv_CLONE_NEWNS;

/// mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL): stop mount events propagating out. 0 or -errno.
int tv_mount_make_private(void);
/// mount(src, dst, NULL, MS_BIND, NULL). 0 or -errno.
int tv_bind_mount(const char *src, const char *dst);

/// posix_spawnp(path…) with every signal at its default disposition and an empty signal mask in
/// the child; `in`/`out`/`err` are dup2'd onto 0/1/2 when >= 0. Returns 0 and *pid, or an errno.
int tv_spawn(const char *path, char *const argv[], char *const envp[], int in, int out, int err, pid_t *pid);
/// As tv_spawn, and the child gets `signal` when the thread that called this ends (prctl
/// PR_SET_PDEATHSIG, kept across the exec), so a command tv started does not outlive a tv that
/// was killed (kill -9): the calling thread must live until it has waited for the child. Made
/// with fork(2), since posix_spawn has no such attribute; between fork and exec the child calls
/// only async-signal-safe functions (sigaction, prctl, getppid, dup2, sigprocmask, execvpe with
/// `path` already holding a slash, or a name looked up in the parent's PATH as posix_spawnp
/// does). Returns 0 and *pid, or an errno (the exec's own failure included: it comes back
/// through a close-on-exec pipe).
int tv_spawn_tied(const char *path, char *const argv[], char *const envp[], int in, int out, int err, int signal, pid_t *pid);
/// posix_spawn(path…) as tv_spawn, and also: the child starts in `directory` (when not NULL) and
/// keeps no descriptor past 2 (posix_spawn_file_actions_addclosefrom_np, glibc 2.34), so nothing
/// the parent has open (a pipe, a socket, Foundation's end for noticing another child's exit)
/// outlives the parent's use of it in this child. `path` is not looked up in PATH. Returns 0 and
/// *pid, or an errno (a missing program or folder included).
int tv_spawn_alone(const char *path, char *const argv[], char *const envp[], const char *directory, int in, int out,
                   int err, pid_t *pid);
/// The wait status decoded: returns 1 and *code for an exit, 2 and *code = signal for a kill, 0 otherwise.
int tv_wait_status(int status, int *code);

/// SIGINT, SIGTERM, SIGHUP, SIGQUIT handlers for a parent waiting on `tv_forward_child`:
/// a signal sent by a process (kill(1), systemd) is passed on to the child; one the terminal
/// generated (Ctrl-C, which the child got too since it shares the foreground process group) is
/// not repeated. A second SIGINT or SIGTERM says on stderr that a third kills the child; the
/// third sends it SIGKILL (a command that ignores both kept tv waiting). Installed once; 0 or -errno.
int tv_forward_signals_install(void);
/// The child to forward to (0 = none); pending forwarded signals are delivered at once.
void tv_forward_signals_set_child(pid_t pid);
/// Restores default dispositions for the four signals.
void tv_forward_signals_remove(void);

/// setsockopt helpers: SO_MARK, SO_BINDTODEVICE, IP_FREEBIND/IPV6_FREEBIND, IP(V6)_MTU_DISCOVER=DO,
/// IPV6_V6ONLY; 0 or -errno.
int tv_set_mark(int fd, uint32_t mark);
int tv_bind_to_device(int fd, const char *name);
int tv_set_freebind(int fd, int family);
int tv_set_pmtu_do(int fd, int family);
/// getsockopt(IP_MTU / IPV6_MTU) on a connected socket: the path MTU, or -errno.
/// IP_MTU_DISCOVER / IPV6_MTU_DISCOVER: PMTUDISC_DO when `forbid_fragments` (EMSGSIZE for a datagram
/// above the path MTU), else PMTUDISC_WANT (the kernel's default: fragment to the path MTU). Also
/// sets IP_RECVERR / IPV6_RECVERR the same way (`tv_set_recverr`): a DO socket queues the ICMP
/// errors routers further out send back, read with `tv_recv_errqueue`. 0 or -errno.
int tv_set_pmtu_mode(int fd, int family, int forbid_fragments);
/// IP_RECVERR / IPV6_RECVERR on (1) or off (0; the kernel empties the error queue). 0 or -errno.
int tv_set_recverr(int fd, int family, int on);
/// recvmsg(fd, MSG_ERRQUEUE | MSG_DONTWAIT): one queued error. The returned datagram bytes (for
/// UDP: the start of the original datagram's payload, as the ICMP quoted it) go to `buf`; the
/// control messages (cmsghdr, then `struct sock_extended_err` and the offender's address) to
/// `control`, whose capacity `*control_len` holds on entry and whose used length it holds on
/// return (0 when the kernel truncated it, MSG_CTRUNC). Returns the payload bytes, or -errno
/// (-EAGAIN: the queue is empty).
ssize_t tv_recv_errqueue(int fd, void *buf, size_t len, void *control, size_t *control_len);
int tv_path_mtu(int fd, int family);
/// socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), its receive buffer raised to
/// 4 MiB (SO_RCVBUFFORCE where permitted, else SO_RCVBUF up to rmem_max).
int tv_socket_dgram(int family);
/// IP6T_SO_ORIGINAL_DST for an IPv6 connection a REDIRECT rule sent to us; fills `addr`.
int tv_original_dst6(int fd, struct sockaddr_storage *addr, socklen_t *len);
/// recv(fd, buf, len, MSG_DONTWAIT) / send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL).
ssize_t tv_recv(int fd, void *buf, size_t len);
ssize_t tv_send_dgram(int fd, const void *buf, size_t len);

#endif

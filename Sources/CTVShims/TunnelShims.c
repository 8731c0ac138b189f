#define _GNU_SOURCE
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_tun.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include "CTVTunnelShims.h"

int tv_tun_open(const char *name, char actual[16]) {
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) { int e = errno; close(fd); return -e; }
    memcpy(actual, ifr.ifr_name, IFNAMSIZ);
    actual[IFNAMSIZ - 1] = 0;
    return fd;
}

int tv_tun_open_offload(const char *name, char actual[16], int header_size, unsigned offloads, int *failed_step) {
    *failed_step = 0;
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
    strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
    int step = 1;
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) goto fail;
    step = 2;
    if (ioctl(fd, TUNSETVNETHDRSZ, &header_size) != 0) goto fail;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    // Native order is little-endian here already; saying so explicitly costs nothing.
    { int le = 1; step = 3; if (ioctl(fd, TUNSETVNETLE, &le) != 0) goto fail; }
#endif
    step = 4;
    if (ioctl(fd, TUNSETOFFLOAD, (unsigned long)offloads) != 0) goto fail;
    memcpy(actual, ifr.ifr_name, IFNAMSIZ);
    actual[IFNAMSIZ - 1] = 0;
    return fd;
fail:
    { int e = errno; close(fd); *failed_step = step; return -e; }
}

const unsigned tv_TUN_F_CSUM = TUN_F_CSUM, tv_TUN_F_TSO4 = TUN_F_TSO4, tv_TUN_F_TSO6 = TUN_F_TSO6;

int tv_unshare(int flags) { return unshare(flags) == 0 ? 0 : -errno; }
int tv_setns(int fd, int nstype) { return setns(fd, nstype) == 0 ? 0 : -errno; }
const int tv_CLONE_NEWNET = CLONE_NEWNET, tv_CLONE_NEWNS = CLONE_NEWNS;

int tv_mount_make_private(void) { return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 ? 0 : -errno; }
int tv_bind_mount(const char *src, const char *dst) { return mount(src, dst, NULL, MS_BIND, NULL) == 0 ? 0 : -errno; }

/* Signals at their defaults and an empty mask in the child; in/out/err dup2'd onto 0/1/2 when >= 0. */
static void spawn_prepare(posix_spawnattr_t *attr, posix_spawn_file_actions_t *actions, int in, int out, int err) {
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_init(attr);
    posix_spawnattr_setsigdefault(attr, &all);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_init(actions);
    if (in >= 0) posix_spawn_file_actions_adddup2(actions, in, 0);
    if (out >= 0) posix_spawn_file_actions_adddup2(actions, out, 1);
    if (err >= 0) posix_spawn_file_actions_adddup2(actions, err, 2);
}

int tv_spawn(const char *path, char *const argv[], char *const envp[], int in, int out, int err, pid_t *pid) {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    spawn_prepare(&attr, &actions, in, out, err);
    int rc = posix_spawnp(pid, path, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int tv_spawn_tied(const char *path, char *const argv[], char *const envp[], int in, int out, int err, int signal, pid_t *pid) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno;
    pid_t parent = getpid();
    sigset_t all, old;
    sigfillset(&all);
    // No handler of the parent's may run in the child before the defaults are back.
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t child = fork();
    if (child == 0) {
        struct sigaction fallback;
        memset(&fallback, 0, sizeof fallback);
        fallback.sa_handler = SIG_DFL;
        for (int s = 1; s < NSIG; s++) (void)sigaction(s, &fallback, NULL);
        int failure = 0;
        // The parent may have ended before the prctl: then nothing would ever send the signal.
        if (prctl(PR_SET_PDEATHSIG, signal) != 0) failure = errno;
        else if (getppid() != parent) failure = ESRCH;
        if (failure == 0 && in >= 0 && dup2(in, 0) < 0) failure = errno;
        if (failure == 0 && out >= 0 && dup2(out, 1) < 0) failure = errno;
        if (failure == 0 && err >= 0 && dup2(err, 2) < 0) failure = errno;
        if (failure == 0) {
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            execvpe(path, argv, envp);
            failure = errno;
        }
        ssize_t ignored = write(report[1], &failure, sizeof failure);
        (void)ignored;
        _exit(127);
    }
    int result = child < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(report[1]);
    if (child > 0) {
        int failure = 0;
        ssize_t n;
        do n = read(report[0], &failure, sizeof failure); while (n < 0 && errno == EINTR);
        if (n == (ssize_t)sizeof failure) {
            while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
            result = failure;
        } else {
            *pid = child;
        }
    }
    close(report[0]);
    return result;
}

int tv_spawn_alone(const char *path, char *const argv[], char *const envp[], const char *directory, int in, int out,
                   int err, pid_t *pid) {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    spawn_prepare(&attr, &actions, in, out, err);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (directory != NULL) posix_spawn_file_actions_addchdir_np(&actions, directory);
    int rc = posix_spawn(pid, path, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int tv_wait_status(int status, int *code) {
    if (WIFEXITED(status)) { *code = WEXITSTATUS(status); return 1; }
    if (WIFSIGNALED(status)) { *code = WTERMSIG(status); return 2; }
    return 0;
}

static volatile sig_atomic_t forward_child = 0;
static volatile sig_atomic_t forward_pending[65];
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static volatile sig_atomic_t forward_stops = 0;

static void forward_say(const char *text) {
    size_t n = strlen(text);
    ssize_t w = write(STDERR_FILENO, text, n);
    (void)w;
}

static void forward_handler(int sig, siginfo_t *info, void *context) {
    (void)context;
    pid_t child = (pid_t)forward_child;
    // A command that ignores SIGINT and SIGTERM kept tv waiting with no word (a trial): the
    // second such signal says what the third does, the third kills it (SIGKILL). Only
    // async-signal-safe calls here: write(2), kill(2).
    if (sig == SIGINT || sig == SIGTERM) {
        forward_stops++;
        if (forward_stops == 2 && child > 0) {
            forward_say("tv: the command is still running; once more (Ctrl-C or SIGTERM) kills it with SIGKILL.\n");
        } else if (forward_stops >= 3 && child > 0) {
            forward_say("tv: killing the command (SIGKILL).\n");
            kill(child, SIGKILL);
            return;
        }
    }
    // SI_KERNEL: the terminal generated it for the whole foreground process group, which the
    // child is in: it has it already.
    if (info != NULL && info->si_code == SI_KERNEL) return;
    if (child > 0) kill(child, sig); else if (sig > 0 && sig < 65) forward_pending[sig] = 1;
}

int tv_forward_signals_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
        if (sigaction(forwarded[i], &sa, NULL) != 0) return -errno;
    }
    return 0;
}

void tv_forward_signals_set_child(pid_t pid) {
    forward_child = pid;
    if (pid <= 0) return;
    for (int s = 1; s < 65; s++) if (forward_pending[s]) { forward_pending[s] = 0; kill(pid, s); }
}

void tv_forward_signals_remove(void) {
    forward_child = 0;
    forward_stops = 0;
    for (unsigned i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) signal(forwarded[i], SIG_DFL);
}

int tv_set_mark(int fd, uint32_t mark) { return setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) == 0 ? 0 : -errno; }
int tv_bind_to_device(int fd, const char *name) {
    return setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, (socklen_t)strlen(name)) == 0 ? 0 : -errno;
}
int tv_set_freebind(int fd, int family) {
    int one = 1;
    int rc = family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one)
                                : setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
    return rc == 0 ? 0 : -errno;
}
int tv_set_pmtu_do(int fd, int family) {
    int v = family == AF_INET6 ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
    int rc = family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, sizeof v)
                                : setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v);
    return rc == 0 ? 0 : -errno;
}
int tv_set_pmtu_mode(int fd, int family, int forbid_fragments) {
    int v = family == AF_INET6 ? (forbid_fragments ? IPV6_PMTUDISC_DO : IPV6_PMTUDISC_WANT)
                               : (forbid_fragments ? IP_PMTUDISC_DO : IP_PMTUDISC_WANT);
    int rc = family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, sizeof v)
                                : setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v);
    if (rc != 0) return -errno;
    return tv_set_recverr(fd, family, forbid_fragments);
}
int tv_set_recverr(int fd, int family, int on) {
    int v = on ? 1 : 0;
    int rc = family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &v, sizeof v)
                                : setsockopt(fd, IPPROTO_IP, IP_RECVERR, &v, sizeof v);
    return rc == 0 ? 0 : -errno;
}
ssize_t tv_recv_errqueue(int fd, void *buf, size_t len, void *control, size_t *control_len) {
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = *control_len;
    ssize_t n = recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
    if (n < 0) return -errno;
    *control_len = (msg.msg_flags & MSG_CTRUNC) ? 0 : msg.msg_controllen;
    return n;
}
int tv_path_mtu(int fd, int family) {
    int mtu = 0; socklen_t len = sizeof mtu;
    int rc = family == AF_INET6 ? getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len)
                                : getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len);
    return rc == 0 ? mtu : -errno;
}
int tv_socket_dgram(int family) {
    int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return fd;
    /* A burst from the server waits here while the engine writes the TUN: at the default
       212,992 bytes, 2,000 datagrams of 1,304 bytes lost 1,372 (UdpRcvbufErrors; direct, with
       the program's own 4 MB buffer, none: a trial). 4 MiB, past rmem_max where tv may
       (SO_RCVBUFFORCE, CAP_NET_ADMIN: tv exec runs as root), else up to rmem_max. */
    int size = 4 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    return fd;
}
int tv_original_dst6(int fd, struct sockaddr_storage *addr, socklen_t *len) {
    *len = sizeof(struct sockaddr_in6);
    return getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, addr, len);
}
ssize_t tv_recv(int fd, void *buf, size_t len) { return recv(fd, buf, len, MSG_DONTWAIT); }
ssize_t tv_send_dgram(int fd, const void *buf, size_t len) { return send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL); }

int tv_set_thread_name(const char *name) {
    char cut[16];
    snprintf(cut, sizeof cut, "%s", name);
    return pthread_setname_np(pthread_self(), cut);
}

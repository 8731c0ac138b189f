#define _GNU_SOURCE
#include <sched.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <linux/netfilter_ipv4.h>
#include "CTVNetShims.h"

int tv_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
int tv_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &ev);
}
int tv_epoll_wait(int epfd, struct epoll_event *events, int max, int timeout_ms) {
    return epoll_wait(epfd, events, max, timeout_ms);
}
uint64_t tv_epoll_event_token(const struct epoll_event *events, int index) { return events[index].data.u64; }
uint32_t tv_epoll_event_bits(const struct epoll_event *events, int index) { return events[index].events; }
int tv_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
int tv_accept(int fd, struct sockaddr *addr, socklen_t *len) { return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC); }
int tv_socket_stream(int family) { return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); }
int tv_pipe(int fds[2]) { return pipe2(fds, O_NONBLOCK | O_CLOEXEC); }
ssize_t tv_splice(int from, int to, size_t len) { return splice(from, NULL, to, NULL, len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK); }
int tv_set_pipe_size(int fd, int size) { return fcntl(fd, F_SETPIPE_SZ, size); }
int tv_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}
ssize_t tv_peek(int fd, void *buf, size_t len) { return recv(fd, buf, len, MSG_PEEK | MSG_DONTWAIT); }
ssize_t tv_send(int fd, const void *buf, size_t len) { return send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT); }
int tv_set_quickack(int fd, int on) { return setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on) == 0 ? 0 : -errno; }
int tv_set_nodelay(int fd) { int one = 1; return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); }
int tv_set_linger_zero(int fd) { struct linger l = { 1, 0 }; return setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l); }
int tv_set_reuse(int fd, int reuseport) {
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) return -1;
    if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) return -1;
    return 0;
}
int tv_set_v6only(int fd, int on) { return setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on); }
int tv_socket_unacknowledged(int fd) {
    int n = 0;
    return ioctl(fd, SIOCOUTQ, &n) == 0 ? n : -errno;
}
int tv_socket_error(int fd) {
    int err = 0; socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
    return err;
}
int tv_peer_has_closed(int fd) {
    struct pollfd p = { .fd = fd, .events = POLLRDHUP, .revents = 0 };
    int rc = poll(&p, 1, 0);
    if (rc < 0) return -1;
    return rc > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) ? 1 : 0;
}
int tv_socket_gone(int fd) {
    struct pollfd p = { .fd = fd, .events = 0, .revents = 0 };
    int rc = poll(&p, 1, 0);
    if (rc < 0) return -1;
    return rc > 0 && (p.revents & (POLLHUP | POLLERR)) ? 1 : 0;
}
int tv_original_dst(int fd, struct sockaddr_storage *addr, socklen_t *len) {
    *len = sizeof(struct sockaddr_in);
    return getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, addr, len);
}
int tv_gettid(void) { return (int)syscall(SYS_gettid); }

const uint32_t tv_EPOLLIN = EPOLLIN, tv_EPOLLOUT = EPOLLOUT, tv_EPOLLRDHUP = EPOLLRDHUP,
    tv_EPOLLERR = EPOLLERR, tv_EPOLLHUP = EPOLLHUP, tv_EPOLLET = EPOLLET, tv_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE, tv_EPOLLONESHOT = EPOLLONESHOT;
const int tv_EPOLL_CTL_ADD = EPOLL_CTL_ADD, tv_EPOLL_CTL_MOD = EPOLL_CTL_MOD, tv_EPOLL_CTL_DEL = EPOLL_CTL_DEL;

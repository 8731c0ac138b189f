// Linux networking bits that Swift's Glibc module does not expose on every build (epoll, eventfd,
// splice, accept4, CPU affinity), wrapped as plain functions and constants.
#ifndef CTVNETSHIMS_H
#define CTVNETSHIMS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

/// epoll_create1(EPOLL_CLOEXEC).
int tv_epoll_create(void);
/// epoll_ctl with `events` and the 64-bit user token.
int tv_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token);
/// epoll_wait into `events` (an array of `max` epoll_event).
int tv_epoll_wait(int epfd, struct epoll_event *events, int max, int timeout_ms);
/// The token and the event bits of events[index] (epoll_event is packed on x86-64).
uint64_t tv_epoll_event_token(const struct epoll_event *events, int index);
uint32_t tv_epoll_event_bits(const struct epoll_event *events, int index);

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC).
int tv_eventfd(void);
/// accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC).
int tv_accept(int fd, struct sockaddr *addr, socklen_t *len);
/// socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0).
int tv_socket_stream(int family);
/// pipe2(fds, O_NONBLOCK | O_CLOEXEC).
int tv_pipe(int fds[2]);
/// splice(from, NULL, to, NULL, len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK).
ssize_t tv_splice(int from, int to, size_t len);
/// fcntl(fd, F_SETPIPE_SZ, size).
int tv_set_pipe_size(int fd, int size);
/// The number of CPUs this thread may run on (sched_getaffinity), at least 1.
int tv_cpu_count(void);
/// recv(fd, buf, len, MSG_PEEK | MSG_DONTWAIT).
ssize_t tv_peek(int fd, void *buf, size_t len);
/// send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT).
ssize_t tv_send(int fd, const void *buf, size_t len);
/// setsockopt helpers.
int tv_set_nodelay(int fd);
/// TCP_QUICKACK: 0 puts the socket in delayed-ACK ("pingpong") mode; on a listener, the sockets it
/// accepts start that way (Linux copies the mode to the child). 0 or -errno.
int tv_set_quickack(int fd, int on);
int tv_set_linger_zero(int fd);
int tv_set_reuse(int fd, int reuseport);
int tv_set_v6only(int fd, int on);
/// getsockopt(SO_ERROR): the pending error of a connecting socket.
int tv_socket_error(int fd);
/// ioctl(SIOCOUTQ) of a TCP socket: the bytes in its send queue the peer has not acknowledged
/// yet (sent or not; tcp(7)); -errno on failure.
int tv_socket_unacknowledged(int fd);
/// 1 when the peer has already closed or reset (poll, no wait: POLLRDHUP, POLLHUP or POLLERR),
/// 0 when not (yet), -1 on error. Reads nothing and clears no pending error.
int tv_peer_has_closed(int fd);
/// 1 when the connection is down for good (poll, no wait: POLLHUP or POLLERR, a reset or both
/// directions closed), so nothing more in its send queue will be acknowledged; 0 when not,
/// -1 on error. A peer's half-close alone (it may still read) is not gone.
int tv_socket_gone(int fd);
/// SO_ORIGINAL_DST (IPv4) for the transparent front-end later; fills `addr`.
int tv_original_dst(int fd, struct sockaddr_storage *addr, socklen_t *len);
/// The calling thread's id (gettid).
int tv_gettid(void);

/// Constants as ints.
extern const uint32_t tv_EPOLLIN, tv_EPOLLOUT, tv_EPOLLRDHUP, tv_EPOLLERR, tv_EPOLLHUP, tv_EPOLLET, tv_EPOLLEXCLUSIVE, tv_EPOLLONESHOT;
extern const int tv_EPOLL_CTL_ADD, tv_EPOLL_CTL_MOD, tv_EPOLL_CTL_DEL;

#endif

// The kernel interfaces the program lookup needs that Swift's Glibc module does not expose:
// NETLINK_SOCK_DIAG sockets and the `inet_diag_req_v2` request (linux/inet_diag.h), and the
// layout of the `inet_diag_msg` answer so the Swift parser's offsets can be checked against the
// kernel headers. Each function is a thin wrapper; the answers are parsed in Swift.
#ifndef CTVPROGRAMSHIMS_H
#define CTVPROGRAMSHIMS_H

#include <stdint.h>
#include <sys/types.h>

/// socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG) with a receive timeout of
/// `timeout_ms` (SO_RCVTIMEO), so a lookup never waits longer than that for the kernel. The
/// socket belongs to the calling thread's network namespace. Returns the fd, or -errno.
int tv_sock_diag_open(int timeout_ms);
/// Writes one SOCK_DIAG_BY_FAMILY dump request (struct nlmsghdr with NLM_F_REQUEST | NLM_F_DUMP,
/// then struct inet_diag_req_v2) into `buf`: sockets of `family` (AF_INET / AF_INET6) and
/// `protocol` (IPPROTO_TCP / IPPROTO_UDP) in the TCP states of bitmask `states`, whose local
/// port is `source_port` (host order; the kernel filters on idiag_sport). Returns the length
/// written (72), or -1 when `capacity` is too small.
int tv_sock_diag_request(uint8_t *buf, int capacity, uint8_t family, uint8_t protocol,
                         uint32_t states, uint16_t source_port, uint32_t sequence);
/// Writes one SOCK_DIAG_BY_FAMILY request for exactly one socket (struct nlmsghdr with
/// NLM_F_REQUEST alone, no NLM_F_DUMP, then struct inet_diag_req_v2): the socket of `family`
/// (AF_INET / AF_INET6) and `protocol` whose local end is `source`:`source_port` and remote end
/// `destination`:`destination_port` (addresses 4 or 16 bytes in network order, ports in host
/// order), any cookie. The kernel answers with one hash lookup (inet_diag_find_one_icsk): one
/// inet_diag_msg, or NLMSG_ERROR -ENOENT. Returns the length written (72), or -1 when
/// `capacity` is too small or the family is neither.
int tv_sock_diag_exact_request(uint8_t *buf, int capacity, uint8_t family, uint8_t protocol,
                               const uint8_t *source, uint16_t source_port,
                               const uint8_t *destination, uint16_t destination_port, uint32_t sequence);
/// sendto(fd, buf, len, 0) to the kernel (struct sockaddr_nl, nl_pid 0). Returns the bytes sent
/// or -errno.
ssize_t tv_netlink_send(int fd, const uint8_t *buf, size_t len);
/// The header sizes and field offsets the Swift parser relies on, read from the kernel headers:
/// [0] sizeof(struct nlmsghdr), [1] sizeof(struct inet_diag_msg), [2] offsetof idiag_uid,
/// [3] offsetof idiag_inode, [4] offsetof id.idiag_sport, [5] offsetof id.idiag_src,
/// [6] offsetof id.idiag_dst, [7] NLMSG_DONE, [8] NLMSG_ERROR, [9] SOCK_DIAG_BY_FAMILY,
/// [10] offsetof id.idiag_dport, [11] sizeof(struct inet_diag_req_v2).
void tv_inet_diag_layout(int out[12]);
/// 1 when `address` (4 bytes for AF_INET, 16 for AF_INET6) is an address of this machine in the
/// calling thread's network namespace (a UDP socket can bind it), 0 when it is not
/// (EADDRNOTAVAIL), -errno when that could not be told.
int tv_address_is_local(int family, const uint8_t *address);

#endif

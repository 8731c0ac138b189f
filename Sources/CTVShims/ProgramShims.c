#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include "CTVProgramShims.h"

int tv_sock_diag_open(int timeout_ms) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -errno;
    struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) { int e = errno; close(fd); return -e; }
    return fd;
}

int tv_sock_diag_request(uint8_t *buf, int capacity, uint8_t family, uint8_t protocol,
                         uint32_t states, uint16_t source_port, uint32_t sequence) {
    struct { struct nlmsghdr h; struct inet_diag_req_v2 r; } m;
    if (capacity < (int)sizeof m) return -1;
    memset(&m, 0, sizeof m);
    m.h.nlmsg_len = sizeof m;
    m.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    m.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    m.h.nlmsg_seq = sequence;
    m.r.sdiag_family = family;
    m.r.sdiag_protocol = protocol;
    m.r.idiag_states = states;
    m.r.id.idiag_sport = htons(source_port);
    m.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    m.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    memcpy(buf, &m, sizeof m);
    return (int)sizeof m;
}

int tv_sock_diag_exact_request(uint8_t *buf, int capacity, uint8_t family, uint8_t protocol,
                               const uint8_t *source, uint16_t source_port,
                               const uint8_t *destination, uint16_t destination_port, uint32_t sequence) {
    struct { struct nlmsghdr h; struct inet_diag_req_v2 r; } m;
    if (capacity < (int)sizeof m) return -1;
    if (family != AF_INET && family != AF_INET6) return -1;
    size_t width = family == AF_INET6 ? 16 : 4;
    memset(&m, 0, sizeof m);
    m.h.nlmsg_len = sizeof m;
    m.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    m.h.nlmsg_flags = NLM_F_REQUEST;
    m.h.nlmsg_seq = sequence;
    m.r.sdiag_family = family;
    m.r.sdiag_protocol = protocol;
    m.r.idiag_states = ~0u;
    m.r.id.idiag_sport = htons(source_port);
    m.r.id.idiag_dport = htons(destination_port);
    memcpy(m.r.id.idiag_src, source, width);
    memcpy(m.r.id.idiag_dst, destination, width);
    m.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    m.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    memcpy(buf, &m, sizeof m);
    return (int)sizeof m;
}

ssize_t tv_netlink_send(int fd, const uint8_t *buf, size_t len) {
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.nl_family = AF_NETLINK;
    ssize_t n = sendto(fd, buf, len, 0, (struct sockaddr *)&kernel, sizeof kernel);
    return n < 0 ? -errno : n;
}

void tv_inet_diag_layout(int out[12]) {
    out[0] = sizeof(struct nlmsghdr);
    out[1] = sizeof(struct inet_diag_msg);
    out[2] = offsetof(struct inet_diag_msg, idiag_uid);
    out[3] = offsetof(struct inet_diag_msg, idiag_inode);
    out[4] = offsetof(struct inet_diag_msg, id) + offsetof(struct inet_diag_sockid, idiag_sport);
    out[5] = offsetof(struct inet_diag_msg, id) + offsetof(struct inet_diag_sockid, idiag_src);
    out[6] = offsetof(struct inet_diag_msg, id) + offsetof(struct inet_diag_sockid, idiag_dst);
    out[7] = NLMSG_DONE;
    out[8] = NLMSG_ERROR;
    out[9] = SOCK_DIAG_BY_FAMILY;
    out[10] = offsetof(struct inet_diag_msg, id) + offsetof(struct inet_diag_sockid, idiag_dport);
    out[11] = sizeof(struct inet_diag_req_v2);
}

int tv_address_is_local(int family, const uint8_t *address) {
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int rc;
    if (family == AF_INET6) {
        struct sockaddr_in6 a;
        memset(&a, 0, sizeof a);
        a.sin6_family = AF_INET6;
        memcpy(&a.sin6_addr, address, 16);
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        memcpy(&a.sin_addr, address, 4);
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    }
    int e = errno;
    close(fd);
    if (rc == 0) return 1;
    return e == EADDRNOTAVAIL ? 0 : -e;
}

// The gathering write BIO (see CTVTLSShims.h). One per TLS leg; used only on its loop's thread.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "CTVTLSShims.h"

typedef struct {
    int fd;
    size_t limit;
    unsigned char *own;   // private buffer (only when bytes are left over)
    size_t own_cap;
    size_t off, len;      // waiting bytes: [off, len) of the active buffer
    int in_scratch;       // the waiting bytes sit in this thread's scratch
    int hold;             // BIO_flush keeps the bytes (tv_wbio_hold)
} tv_wbio;

#define SCRATCH_CAP (256 * 1024)
static __thread unsigned char *scratch;
static __thread tv_wbio *scratch_owner;

static unsigned char *active(tv_wbio *w) { return w->in_scratch ? scratch : w->own; }

/// Moves this BIO's bytes out of the scratch into its own buffer.
static int move_to_own(tv_wbio *w) {
    size_t n = w->len - w->off;
    if (w->own_cap < n) {
        unsigned char *grown = realloc(w->own, n);
        if (!grown) return 0;
        w->own = grown;
        w->own_cap = n;
    }
    memcpy(w->own, scratch + w->off, n);
    w->off = 0;
    w->len = n;
    w->in_scratch = 0;
    scratch_owner = NULL;
    return 1;
}

static int wbio_write(BIO *b, const char *data, size_t dlen, size_t *written) {
    tv_wbio *w = BIO_get_data(b);
    *written = 0;
    BIO_clear_retry_flags(b);
    if (dlen == 0) return 1;
    size_t waiting = w->len - w->off;
    if (waiting + dlen > w->limit) {
        if (waiting >= w->limit) { BIO_set_retry_write(b); return 0; }
        dlen = w->limit - waiting;
    }
    if (waiting == 0 && !w->in_scratch) {
        // Start a burst in the scratch (taking it from another BIO if it left bytes there).
        if (!scratch) { scratch = malloc(SCRATCH_CAP); if (!scratch) return 0; }
        if (scratch_owner && scratch_owner != w) {
            if (!move_to_own(scratch_owner)) return 0;
        }
        if (dlen <= SCRATCH_CAP) {
            scratch_owner = w;
            w->in_scratch = 1;
            w->off = w->len = 0;
        }
    }
    if (w->in_scratch) {
        if (w->len + dlen > SCRATCH_CAP) {
            if (!move_to_own(w)) return 0;
        } else {
            memcpy(scratch + w->len, data, dlen);
            w->len += dlen;
            *written = dlen;
            return 1;
        }
    }
    if (w->off > 0 && w->off == w->len) w->off = w->len = 0;
    if (w->own_cap - w->len < dlen) {
        if (w->off > 0) {  // compact first
            memmove(w->own, w->own + w->off, w->len - w->off);
            w->len -= w->off;
            w->off = 0;
        }
        if (w->own_cap - w->len < dlen) {
            size_t want = w->len + dlen;
            unsigned char *grown = realloc(w->own, want);
            if (!grown) return 0;
            w->own = grown;
            w->own_cap = want;
        }
    }
    memcpy(w->own + w->len, data, dlen);
    w->len += dlen;
    *written = dlen;
    return 1;
}

static void drained(tv_wbio *w) {
    w->off = w->len = 0;
    if (w->in_scratch) { w->in_scratch = 0; if (scratch_owner == w) scratch_owner = NULL; }
    free(w->own);
    w->own = NULL;
    w->own_cap = 0;
}

static int flush_now(tv_wbio *w) {
    while (w->off < w->len) {
        ssize_t n = send(w->fd, active(w) + w->off, w->len - w->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) { w->off += (size_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            // Keep the rest, out of the scratch (another leg may use it before we are writable).
            if (w->in_scratch && !move_to_own(w)) { errno = ENOMEM; return -1; }
            return 0;
        }
        return -1;
    }
    drained(w);
    return 1;
}

static long wbio_ctrl(BIO *b, int cmd, long num, void *ptr) {
    (void)num; (void)ptr;
    tv_wbio *w = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH: {
        BIO_clear_retry_flags(b);
        if (w->hold) return 1;
        int r = flush_now(w);
        if (r == 0) { BIO_set_retry_write(b); return 0; }
        return r > 0 ? 1 : 0;
    }
    case BIO_CTRL_WPENDING: return (long)(w->len - w->off);
    case BIO_CTRL_PENDING: return 0;
    case BIO_CTRL_PUSH: case BIO_CTRL_POP: return 0;
    default: return 0;
    }
}

static int wbio_create(BIO *b) { BIO_set_init(b, 0); return 1; }

static int wbio_destroy(BIO *b) {
    tv_wbio *w = BIO_get_data(b);
    if (w) {
        if (w->in_scratch && scratch_owner == w) scratch_owner = NULL;
        free(w->own);
        free(w);
        BIO_set_data(b, NULL);
    }
    return 1;
}

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;
static void make_method(void) {
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tv gathering write");
    if (!m) return;
    BIO_meth_set_write_ex(m, wbio_write);
    BIO_meth_set_ctrl(m, wbio_ctrl);
    BIO_meth_set_create(m, wbio_create);
    BIO_meth_set_destroy(m, wbio_destroy);
    method = m;
}

BIO *tv_wbio_new(int fd, size_t limit) {
    pthread_once(&method_once, make_method);
    if (!method) return NULL;
    BIO *b = BIO_new(method);
    if (!b) return NULL;
    tv_wbio *w = calloc(1, sizeof *w);
    if (!w) { BIO_free(b); return NULL; }
    w->fd = fd;
    w->limit = limit;
    BIO_set_data(b, w);
    BIO_set_init(b, 1);
    return b;
}

size_t tv_wbio_pending(BIO *bio) {
    tv_wbio *w = BIO_get_data(bio);
    return w ? w->len - w->off : 0;
}

void tv_wbio_hold(BIO *bio, int on) {
    tv_wbio *w = BIO_get_data(bio);
    if (w) w->hold = on;
}

int tv_wbio_flush(BIO *bio) {
    tv_wbio *w = BIO_get_data(bio);
    return w ? flush_now(w) : 1;
}

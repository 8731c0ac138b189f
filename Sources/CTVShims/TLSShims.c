#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include <errno.h>
#include "CTVTLSShims.h"

int tv_ssl_set_sni(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
long tv_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
long tv_ssl_set_mode(SSL *ssl, long mode) { return SSL_set_mode(ssl, mode); }
int tv_ssl_ctx_set_min_proto(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_min_proto_version(ctx, version); }
int tv_ssl_ctx_set_max_proto(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_max_proto_version(ctx, version); }
void tv_ssl_ctx_set_read_ahead(SSL_CTX *ctx, int on) { SSL_CTX_set_read_ahead(ctx, on); }
long tv_ssl_ctx_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
long tv_ssl_ctx_set_session_cache_size(SSL_CTX *ctx, long size) { return SSL_CTX_sess_set_cache_size(ctx, size); }
int tv_err_reason(unsigned long code) { return ERR_GET_REASON(code); }
int tv_err_lib(unsigned long code) { return ERR_GET_LIB(code); }
int tv_ssl_clear_chain_certs(SSL *ssl) { return (int)SSL_clear_chain_certs(ssl); }
int tv_ssl_add1_chain_cert(SSL *ssl, X509 *cert) { return (int)SSL_add1_chain_cert(ssl, cert); }

const long tv_SSL_MODE_RELEASE_BUFFERS = SSL_MODE_RELEASE_BUFFERS;
const long tv_SSL_MODE_ENABLE_PARTIAL_WRITE = SSL_MODE_ENABLE_PARTIAL_WRITE;
const long tv_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER = SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
const long tv_SSL_MODE_AUTO_RETRY = SSL_MODE_AUTO_RETRY;
const uint64_t tv_SSL_OP_IGNORE_UNEXPECTED_EOF = SSL_OP_IGNORE_UNEXPECTED_EOF;
const uint64_t tv_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
const uint64_t tv_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
const uint64_t tv_SSL_OP_CIPHER_SERVER_PREFERENCE = SSL_OP_CIPHER_SERVER_PREFERENCE;
const uint64_t tv_SSL_OP_LEGACY_SERVER_CONNECT = SSL_OP_LEGACY_SERVER_CONNECT;
const uint64_t tv_SSL_OP_PRIORITIZE_CHACHA = SSL_OP_PRIORITIZE_CHACHA;
const long tv_SSL_SESS_CACHE_CLIENT = SSL_SESS_CACHE_CLIENT;
const long tv_SSL_SESS_CACHE_SERVER = SSL_SESS_CACHE_SERVER;
const long tv_SSL_SESS_CACHE_OFF = SSL_SESS_CACHE_OFF;
const long tv_SSL_SESS_CACHE_NO_INTERNAL_STORE = SSL_SESS_CACHE_NO_INTERNAL_STORE;
const int tv_TLS1_VERSION = TLS1_VERSION, tv_TLS1_1_VERSION = TLS1_1_VERSION,
    tv_TLS1_2_VERSION = TLS1_2_VERSION, tv_TLS1_3_VERSION = TLS1_3_VERSION;

static pthread_mutex_t keylog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t keylog_once = PTHREAD_ONCE_INIT;
static int keylog_index = -1;

static int secrets_index = -1;

/* Where a context's key log lines go besides the file: a function and its context (the
   capture writer's queue; it copies the line and never blocks). Freed with the SSL_CTX. */
struct tv_secrets_sink { tv_secrets_sink_fn fn; void *context; };

static void secrets_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp) {
    (void)parent; (void)ad; (void)idx; (void)argl; (void)argp;
    free(ptr);
}

static void keylog_init(void) {
    keylog_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    secrets_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, secrets_free);
}

static void keylog_line(const SSL *ssl, const char *line) {
    SSL_CTX *ctx = SSL_get_SSL_CTX(ssl);
    if (ctx == NULL || keylog_index < 0) return;
    intptr_t stored = (intptr_t)SSL_CTX_get_ex_data(ctx, keylog_index);
    if (stored > 0) {
        int fd = (int)(stored - 1);
        struct iovec parts[2] = { { (void *)line, strlen(line) }, { (void *)"\n", 1 } };
        pthread_mutex_lock(&keylog_lock);
        ssize_t r;
        do { r = writev(fd, parts, 2); } while (r < 0 && errno == EINTR);
        pthread_mutex_unlock(&keylog_lock);
    }
    struct tv_secrets_sink *sink = secrets_index < 0 ? NULL : SSL_CTX_get_ex_data(ctx, secrets_index);
    if (sink != NULL) sink->fn(sink->context, line, strlen(line));
}

int tv_keylog_attach_sink(SSL_CTX *ctx, tv_secrets_sink_fn fn, void *context) {
    pthread_once(&keylog_once, keylog_init);
    if (keylog_index < 0 || secrets_index < 0) return 0;
    struct tv_secrets_sink *sink = malloc(sizeof *sink);
    if (sink == NULL) return 0;
    sink->fn = fn;
    sink->context = context;
    if (!SSL_CTX_set_ex_data(ctx, secrets_index, sink)) { free(sink); return 0; }
    return 1;
}

void tv_keylog_arm(SSL_CTX *ctx) {
    /* One aligned pointer store, NULL -> keylog_line and never back (see the header): a
       handshake on another thread reads either, and libssl's two reads per line (the NULL check,
       then the call) can only see NULL then NULL, NULL then the function, or the function twice. */
    if (SSL_CTX_get_keylog_callback(ctx) != keylog_line) SSL_CTX_set_keylog_callback(ctx, keylog_line);
}

int tv_keylog_attach(SSL_CTX *ctx, int fd) {
    pthread_once(&keylog_once, keylog_init);
    if (keylog_index < 0) return 0;
    if (fd < 0) {
        SSL_CTX_set_keylog_callback(ctx, NULL);
        return SSL_CTX_set_ex_data(ctx, keylog_index, NULL);
    }
    if (!SSL_CTX_set_ex_data(ctx, keylog_index, (void *)(intptr_t)(fd + 1))) return 0;
    SSL_CTX_set_keylog_callback(ctx, keylog_line);
    return 1;
}

/* Socket-read tracking: after each read on the SSL's socket BIO, *drained says whether the
   kernel's receive queue was emptied (a short read, or EAGAIN). With read-ahead, one BIO read can
   bring several records; once they are consumed and the last read was short, the socket holds
   nothing more, so the relay can wait for the next epoll edge instead of calling read() again
   only to get EAGAIN. */
static long tv_read_tracker(BIO *b, int oper, const char *argp, size_t len, int argi, long argl, int ret, size_t *processed) {
    (void)argp; (void)argi; (void)argl;
    if (oper == (BIO_CB_READ | BIO_CB_RETURN)) {
        int *drained = (int *)BIO_get_callback_arg(b);
        if (drained != NULL) {
            if (ret > 0) *drained = (processed != NULL && *processed < len) ? 1 : 0;
            else *drained = BIO_should_retry(b) ? 1 : 0;
        }
    }
    return ret;
}

int tv_ssl_track_socket_reads(SSL *ssl, int *drained) {
    BIO *b = SSL_get_rbio(ssl);
    if (b == NULL) return 0;
    *drained = 0;
    BIO_set_callback_arg(b, (char *)drained);
    BIO_set_callback_ex(b, tv_read_tracker);
    return 1;
}

// OpenSSL macros the proxy's TLS legs need, as functions; plus the key log writer, which lives in
// C so that the callback OpenSSL calls mid-handshake is one locked write(2) and nothing else.
#ifndef CTVTLSSHIMS_H
#define CTVTLSSHIMS_H

#include <openssl/ssl.h>
#include <openssl/err.h>

/// SSL_set_tlsext_host_name: the SNI a client leg sends (RFC 6066 §3).
int tv_ssl_set_sni(SSL *ssl, const char *name);
/// SSL_CTX_set_mode / SSL_set_mode / SSL_CTX_clear_mode.
long tv_ssl_ctx_set_mode(SSL_CTX *ctx, long mode);
long tv_ssl_set_mode(SSL *ssl, long mode);
/// SSL_CTX_set_min_proto_version / SSL_CTX_set_max_proto_version.
int tv_ssl_ctx_set_min_proto(SSL_CTX *ctx, int version);
int tv_ssl_ctx_set_max_proto(SSL_CTX *ctx, int version);
/// SSL_CTX_set_read_ahead.
void tv_ssl_ctx_set_read_ahead(SSL_CTX *ctx, int on);
/// SSL_CTX_set_session_cache_mode.
long tv_ssl_ctx_set_session_cache_mode(SSL_CTX *ctx, long mode);
/// SSL_CTX_sess_set_cache_size.
long tv_ssl_ctx_set_session_cache_size(SSL_CTX *ctx, long size);
/// ERR_GET_REASON / ERR_GET_LIB.
int tv_err_reason(unsigned long code);
int tv_err_lib(unsigned long code);
/// SSL_add1_chain_cert.
int tv_ssl_add1_chain_cert(SSL *ssl, X509 *cert);
/// SSL_clear_chain_certs.
int tv_ssl_clear_chain_certs(SSL *ssl);

/// After `SSL_set_fd`: keeps `*drained` up to date after every read on the SSL's socket BIO
/// (1 = the last read was short or EAGAIN, so the socket's receive queue was empty then).
/// `drained` must outlive the SSL's BIO.
int tv_ssl_track_socket_reads(SSL *ssl, int *drained);

/// Constants Swift does not see as plain integers on every build.
extern const long tv_SSL_MODE_RELEASE_BUFFERS, tv_SSL_MODE_ENABLE_PARTIAL_WRITE,
    tv_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, tv_SSL_MODE_AUTO_RETRY;
extern const uint64_t tv_SSL_OP_IGNORE_UNEXPECTED_EOF, tv_SSL_OP_NO_COMPRESSION,
    tv_SSL_OP_NO_RENEGOTIATION, tv_SSL_OP_CIPHER_SERVER_PREFERENCE, tv_SSL_OP_LEGACY_SERVER_CONNECT,
    tv_SSL_OP_PRIORITIZE_CHACHA;
extern const long tv_SSL_SESS_CACHE_CLIENT, tv_SSL_SESS_CACHE_SERVER, tv_SSL_SESS_CACHE_OFF,
    tv_SSL_SESS_CACHE_NO_INTERNAL_STORE;
extern const int tv_TLS1_VERSION, tv_TLS1_1_VERSION, tv_TLS1_2_VERSION, tv_TLS1_3_VERSION;

/// Makes every SSL created from `ctx` append NSS key log lines to `fd` (opened O_APPEND by the
/// caller). One process-wide lock serialises the lines of every context, so two handshakes never
/// interleave. `fd` < 0 detaches. The fd must stay open while the context lives.
int tv_keylog_attach(SSL_CTX *ctx, int fd);

/// Where key log lines go besides a file: called with each line (no line feed; valid during the
/// call only) on the thread doing the handshake. Must not block.
typedef void (*tv_secrets_sink_fn)(void *context, const char *line, size_t length);

/// Makes every SSL created from `ctx` also hand its NSS key log lines to `fn(context, …)` (with
/// or without a key log file from `tv_keylog_attach`). `context` must outlive the context.
/// Lines are made only once the context has its callback: from `tv_keylog_attach` with a file,
/// or from `tv_keylog_arm`.
int tv_keylog_attach_sink(SSL_CTX *ctx, tv_secrets_sink_fn fn, void *context);

/// Gives `ctx` the key log callback, so that libssl makes NSS key log lines for the file and the
/// sink attached above (it makes none for a context without one). May be called while other
/// threads run handshakes on `ctx`: the callback only ever goes from NULL to tv's function, and
/// is never taken away again (`SSL_CTX_set_keylog_callback` is a plain store, and libssl reads
/// it once for its NULL check and again for the call, so NULL after a non-NULL check would crash).
void tv_keylog_arm(SSL_CTX *ctx);

#endif

#ifndef CTVTLSSHIMS_WBIO
#define CTVTLSSHIMS_WBIO
/// A write-only BIO that gathers what OpenSSL writes (records) and sends it to `fd` in one
/// send(2) on BIO_flush: four 16 KiB records go out in one system call instead of four.
/// While nothing is waiting it owns no memory (the bytes of one burst sit in a per-thread
/// scratch buffer; only what the socket does not take is copied to a buffer of its own).
/// Writes never block: when more than `limit` bytes wait, BIO_write asks to retry (WANT_WRITE).
BIO *tv_wbio_new(int fd, size_t limit);
/// Bytes waiting in such a BIO.
size_t tv_wbio_pending(BIO *bio);
/// Sends what waits: 1 = all sent, 0 = the socket is full (try again when writable),
/// -1 = error (errno set).
int tv_wbio_flush(BIO *bio);
/// While `on`, OpenSSL's own BIO_flush keeps the bytes (and says it sent them); only
/// tv_wbio_flush sends. OpenSSL 3 flushes a TLS 1.3 server's flight (ServerHello … Finished)
/// *before* it derives and logs the application and client handshake secrets; held, the flight
/// leaves after the key log callback, so a capture's secrets precede the packets they decrypt.
void tv_wbio_hold(BIO *bio, int on);
#endif

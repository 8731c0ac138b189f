// libpq and libmicrohttpd opened on first use (see CTVLazyLibraries.h). Each forwarder has the
// exact prototype of the library's header (the compiler checks it against the declaration) and
// calls the function dlsym found. The forwarders are hidden (never in tv's dynamic symbol table,
// even when a build exports every symbol), so the libraries' own internal calls never reach them.
#define _GNU_SOURCE
#include "CTVLazyLibraries.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/time.h>
#include <unistd.h>
// Hidden: these declarations, and so the forwarders defined below, stay out of tv's dynamic
// symbol table (every header they include is included above, so libc's stay default).
#pragma GCC visibility push(hidden)
#include <postgresql/libpq-fe.h>
#include <microhttpd.h>
#pragma GCC visibility pop

// X(return type, name, (parameters), (arguments)) for every function tv calls.
#define TV_LIBPQ_FUNCTIONS(X) \
    X(PGconn *, PQconnectdbParams, (const char *const *k, const char *const *v, int e), (k, v, e)) \
    X(ConnStatusType, PQstatus, (const PGconn *c), (c)) \
    X(char *, PQerrorMessage, (const PGconn *c), (c)) \
    X(void, PQfinish, (PGconn *c), (c)) \
    X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *c, PQnoticeProcessor p, void *a), (c, p, a)) \
    X(PGresult *, PQexec, (PGconn *c, const char *q), (c, q)) \
    X(PGresult *, PQexecParams, (PGconn *c, const char *q, int n, const Oid *t, const char *const *v, \
                                 const int *l, const int *f, int r), (c, q, n, t, v, l, f, r)) \
    X(void, PQclear, (PGresult *r), (r)) \
    X(ExecStatusType, PQresultStatus, (const PGresult *r), (r)) \
    X(char *, PQresultErrorMessage, (const PGresult *r), (r)) \
    X(int, PQntuples, (const PGresult *r), (r)) \
    X(int, PQnfields, (const PGresult *r), (r)) \
    X(Oid, PQftype, (const PGresult *r, int f), (r, f)) \
    X(char *, PQgetvalue, (const PGresult *r, int t, int f), (r, t, f)) \
    X(int, PQgetisnull, (const PGresult *r, int t, int f), (r, t, f)) \
    X(char *, PQcmdTuples, (PGresult *r), (r)) \
    X(PQconninfoOption *, PQconninfoParse, (const char *s, char **e), (s, e)) \
    X(void, PQconninfoFree, (PQconninfoOption *o), (o)) \
    X(void, PQfreemem, (void *p), (p)) \
    X(int, PQputCopyData, (PGconn *c, const char *b, int n), (c, b, n)) \
    X(int, PQputCopyEnd, (PGconn *c, const char *e), (c, e)) \
    X(PGresult *, PQgetResult, (PGconn *c), (c)) \
    X(PGresult *, PQprepare, (PGconn *c, const char *s, const char *q, int n, const Oid *t), (c, s, q, n, t)) \
    X(PGresult *, PQexecPrepared, (PGconn *c, const char *s, int n, const char *const *v, const int *l, \
                                   const int *f, int r), (c, s, n, v, l, f, r)) \
    X(int, PQconnectionNeedsPassword, (const PGconn *c), (c)) \
    X(int, PQconnectionUsedPassword, (const PGconn *c), (c))

#define TV_LIBMICROHTTPD_FUNCTIONS(X) \
    X(struct MHD_Daemon *, MHD_start_daemon_va, (unsigned int f, uint16_t p, MHD_AcceptPolicyCallback a, void *ac, \
                                                 MHD_AccessHandlerCallback d, void *dc, va_list ap), (f, p, a, ac, d, dc, ap)) \
    X(void, MHD_stop_daemon, (struct MHD_Daemon *d), (d)) \
    X(struct MHD_Response *, MHD_create_response_from_callback, (uint64_t s, size_t b, MHD_ContentReaderCallback c, \
                                                                 void *cc, MHD_ContentReaderFreeCallback f), (s, b, c, cc, f)) \
    X(struct MHD_Response *, MHD_create_response_from_buffer, (size_t s, void *b, enum MHD_ResponseMemoryMode m), (s, b, m)) \
    X(void, MHD_destroy_response, (struct MHD_Response *r), (r)) \
    X(enum MHD_Result, MHD_add_response_header, (struct MHD_Response *r, const char *h, const char *c), (r, h, c)) \
    X(enum MHD_Result, MHD_queue_response, (struct MHD_Connection *c, unsigned int s, struct MHD_Response *r), (c, s, r)) \
    X(const char *, MHD_lookup_connection_value, (struct MHD_Connection *c, enum MHD_ValueKind k, const char *n), (c, k, n)) \
    X(int, MHD_get_connection_values, (struct MHD_Connection *c, enum MHD_ValueKind k, MHD_KeyValueIterator i, void *ic), (c, k, i, ic))

// One pointer per function, NULL until its library is loaded.
#define TV_POINTER(ret, name, params, args) static ret (*tv_real_##name) params;
TV_LIBPQ_FUNCTIONS(TV_POINTER)
TV_LIBMICROHTTPD_FUNCTIONS(TV_POINTER)

/// One library's table: its soname and the addresses of its pointers with their symbol names.
typedef struct {
    const char *name;
    void **slot;
} tv_lazy_symbol;

#define TV_SYMBOL(ret, name, params, args) { #name, (void **)&tv_real_##name },
static const tv_lazy_symbol tv_libpq_symbols[] = { TV_LIBPQ_FUNCTIONS(TV_SYMBOL) };
static const tv_lazy_symbol tv_libmicrohttpd_symbols[] = { TV_LIBMICROHTTPD_FUNCTIONS(TV_SYMBOL) };

typedef struct {
    const char *soname;
    const tv_lazy_symbol *symbols;
    size_t count;
    pthread_once_t once;
    int loaded;
    char detail[256];
} tv_lazy_entry;

static tv_lazy_entry tv_lazy_entries[] = {
    { "libpq.so.5", tv_libpq_symbols, sizeof tv_libpq_symbols / sizeof tv_libpq_symbols[0], PTHREAD_ONCE_INIT, 0, "" },
    { "libmicrohttpd.so.12", tv_libmicrohttpd_symbols, sizeof tv_libmicrohttpd_symbols / sizeof tv_libmicrohttpd_symbols[0],
      PTHREAD_ONCE_INIT, 0, "" },
};

static void tv_lazy_open(tv_lazy_entry *entry) {
    void *handle = dlopen(entry->soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(entry->detail, sizeof entry->detail, "%s", why ? why : entry->soname);
        return;
    }
    for (size_t i = 0; i < entry->count; i++) {
        void *address = dlsym(handle, entry->symbols[i].name);
        if (address == NULL) {
            snprintf(entry->detail, sizeof entry->detail, "%s has no %s", entry->soname, entry->symbols[i].name);
            for (size_t j = 0; j < i; j++) *entry->symbols[j].slot = NULL;
            dlclose(handle);
            return;
        }
        *entry->symbols[i].slot = address;
    }
    entry->loaded = 1;
}

static void tv_lazy_open_libpq(void) { tv_lazy_open(&tv_lazy_entries[TV_LAZY_LIBPQ]); }
static void tv_lazy_open_libmicrohttpd(void) { tv_lazy_open(&tv_lazy_entries[TV_LAZY_LIBMICROHTTPD]); }

const char *tv_lazy_library_open(tv_lazy_library library) {
    if ((unsigned)library > TV_LAZY_LIBMICROHTTPD) return "no such library";
    tv_lazy_entry *entry = &tv_lazy_entries[library];
    pthread_once(&entry->once, library == TV_LAZY_LIBPQ ? tv_lazy_open_libpq : tv_lazy_open_libmicrohttpd);
    return entry->loaded ? NULL : entry->detail;
}

/// A forwarder reached before its library was loaded: a missing `tv_lazy_library_open` call.
static void tv_lazy_missing(const char *name) {
    fprintf(stderr, "tv: internal error: %s called before its library was loaded\n", name);
    abort();
}

#define TV_FORWARDER(ret, name, params, args) \
    ret name params { \
        if (tv_real_##name == NULL) tv_lazy_missing(#name); \
        return tv_real_##name args; \
    }
TV_LIBPQ_FUNCTIONS(TV_FORWARDER)
TV_LIBMICROHTTPD_FUNCTIONS(TV_FORWARDER)

// The libraries only some commands need, opened when first needed instead of at every start:
// libpq (the shared history, `--store`/`tv shared`) and libmicrohttpd (`tv web`, `--metrics`).
// Linking them would map them and the ~19 libraries they pull in (GnuTLS, Kerberos, LDAP, SASL,
// p11-kit, nettle, gmp…) into every `tv` process (~2.5 MiB of RSS at rest, issue 21).
//
// LazyLibraries.c defines, under libpq's and libmicrohttpd's own names and with the prototypes of
// their headers (the CPostgres / CMicroHTTPD modules, which no longer link them), forwarders that
// call the real functions found with dlsym. Call `tv_lazy_library_open` before the first call of
// a library's functions; a forwarder called while its library is not loaded aborts (a bug).
#ifndef CTVLAZYLIBRARIES_H
#define CTVLAZYLIBRARIES_H

#include <stddef.h>

/// The libraries opened on demand.
typedef enum {
    /// libpq.so.5 (Debian package libpq5).
    TV_LAZY_LIBPQ = 0,
    /// libmicrohttpd.so.12 (Debian package libmicrohttpd12).
    TV_LAZY_LIBMICROHTTPD = 1,
} tv_lazy_library;

/// Opens `library` (dlopen of its soname, then dlsym of every function tv calls), once per
/// process; later calls give the first call's answer. Thread-safe.
/// Returns NULL when loaded, else why not (static text: dlerror's words, or "libpq.so.5 has no
/// PQexec" for an older version).
const char *tv_lazy_library_open(tv_lazy_library library);

#endif

// libmicrohttpd's declarations only: tv does not link libmicrohttpd; CTVShims' LazyLibraries.c opens it
// on first use and defines these functions as forwarders (call `tv_lazy_library_open(TV_LAZY_LIBMICROHTTPD)` first).
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

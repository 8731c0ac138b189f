// libpq's declarations only: tv does not link libpq; CTVShims' LazyLibraries.c opens it on first
// use and defines these functions as forwarders (call `tv_lazy_library_open(TV_LAZY_LIBPQ)` first).
#include <postgresql/libpq-fe.h>

#include <sqlite3.h>

/// `sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on)` (sqlite.org/c3ref/c_config_covering_index_scan.html):
/// `sqlite3_config` is variadic, which Swift cannot call. Only before SQLite is initialized
/// (before the process's first connection); returns SQLITE_OK, or SQLITE_MISUSE after that.
static inline int tv_sqlite3_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}

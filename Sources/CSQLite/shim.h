#include <sqlite3.h>

/// `sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on)` (sqlite.org/c3ref/c_config_covering_index_scan.html):
/// `sqlite3_config` is variadic, which Swift cannot call. Only before SQLite is initialized
/// (before the process's first connection); returns SQLITE_OK, or SQLITE_MISUSE after that.
static inline int tv_sqlite3_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}

/// `sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0)` (sqlite.org/c3ref/c_config_covering_index_scan.html#sqliteconfigpagecache):
/// no bulk allocation when a connection's page cache is made; each cache line is allocated when
/// first used. Same rules as above: only before SQLite is initialized.
static inline int tv_sqlite3_config_no_bulk_page_cache(void) {
    return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
}

/// `sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, on, &now)`
/// (sqlite.org/c3ref/c_dbconfig_defensive.html#sqlitedbconfigenabletrigger): triggers of the
/// main schema on (1) or off (0) for this connection only; `sqlite3_db_config` is variadic,
/// which Swift cannot call. Statements prepared before are re-prepared at their next step.
/// Returns SQLITE_OK and stores the setting now in effect (0 or 1) in `*now`.
static inline int tv_sqlite3_db_enable_triggers(sqlite3 *db, int on, int *now) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, on, now);
}

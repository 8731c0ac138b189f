#include <zlib.h>

/* inflateInit2 is a macro (it passes the library version and the struct size); Swift cannot call
   macros, so this inline function does. windowBits: 15 zlib, -15 raw deflate, 15+32 gzip or zlib. */
static inline int tv_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

/* deflateInit2 is a macro for the same reason (i21-audit: the evidence bundle's gzip).
   windowBits 15 + 16 writes a gzip member (RFC 1952). */
static inline int tv_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

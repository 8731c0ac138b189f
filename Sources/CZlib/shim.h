#include <zlib.h>

/* inflateInit2 is a macro (it passes the library version and the struct size); Swift cannot call
   macros, so this inline function does. windowBits: 15 zlib, -15 raw deflate, 15+32 gzip or zlib. */
static inline int tv_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

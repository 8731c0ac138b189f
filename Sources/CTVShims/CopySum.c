// The fused copy and word sum of the decrypted capture (CTVCopySum.h).
#include "CTVCopySum.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

uint64_t tv_copy_and_sum32(void *restrict destination, const void *restrict source, size_t count) {
    uint8_t *d = destination;
    const uint8_t *s = source;
    size_t i = 0;
    uint64_t total = 0;
#if defined(__SSE2__)
    // Four 64-bit accumulators of two lanes each: every 32-bit word is widened (unpacked with
    // zero) into a 64-bit lane, so no carry is lost; four keep the adds independent.
    const __m128i zero = _mm_setzero_si128();
    __m128i a0 = zero, a1 = zero, a2 = zero, a3 = zero;
    for (; i + 64 <= count; i += 64) {
        __m128i v0 = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i v1 = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i v3 = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_storeu_si128((__m128i *)(d + i), v0);
        _mm_storeu_si128((__m128i *)(d + i + 16), v1);
        _mm_storeu_si128((__m128i *)(d + i + 32), v2);
        _mm_storeu_si128((__m128i *)(d + i + 48), v3);
        a0 = _mm_add_epi64(a0, _mm_unpacklo_epi32(v0, zero));
        a1 = _mm_add_epi64(a1, _mm_unpackhi_epi32(v0, zero));
        a2 = _mm_add_epi64(a2, _mm_unpacklo_epi32(v1, zero));
        a3 = _mm_add_epi64(a3, _mm_unpackhi_epi32(v1, zero));
        a0 = _mm_add_epi64(a0, _mm_unpacklo_epi32(v2, zero));
        a1 = _mm_add_epi64(a1, _mm_unpackhi_epi32(v2, zero));
        a2 = _mm_add_epi64(a2, _mm_unpacklo_epi32(v3, zero));
        a3 = _mm_add_epi64(a3, _mm_unpackhi_epi32(v3, zero));
    }
    for (; i + 16 <= count; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        _mm_storeu_si128((__m128i *)(d + i), v);
        a0 = _mm_add_epi64(a0, _mm_unpacklo_epi32(v, zero));
        a1 = _mm_add_epi64(a1, _mm_unpackhi_epi32(v, zero));
    }
    __m128i all = _mm_add_epi64(_mm_add_epi64(a0, a1), _mm_add_epi64(a2, a3));
    uint64_t lanes[2];
    memcpy(lanes, &all, sizeof lanes);
    total = lanes[0] + lanes[1];
#endif
    for (; i + 4 <= count; i += 4) {
        uint32_t word;
        memcpy(&word, s + i, 4);
        memcpy(d + i, &word, 4);
        total += word;
    }
    memcpy(d + i, s + i, count - i);
    return total;
}

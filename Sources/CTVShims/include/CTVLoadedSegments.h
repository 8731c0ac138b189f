// The loaded objects' segments as the dynamic linker mapped them (dl_iterate_phdr(3)), for
// dropping start-up pages at rest (issue 21, TVCore's StartupPages). Reading only: what to do
// with them is decided in Swift (StartupPagePlan).
#ifndef CTVLOADEDSEGMENTS_H
#define CTVLOADEDSEGMENTS_H

#include <stdint.h>

/// One PT_LOAD or PT_GNU_RELRO program header of a loaded object, at its run-time address.
typedef struct tv_segment {
    /// First byte (load base + p_vaddr).
    uintptr_t start;
    /// One past the last byte in memory (start + p_memsz).
    uintptr_t end;
    /// p_flags: PF_X 1, PF_W 2, PF_R 4.
    uint32_t flags;
    /// Index of the object in dl_iterate_phdr's order: 0 is the program itself.
    uint32_t object;
    /// 1 for PT_GNU_RELRO (written by relocation, then made read-only), 0 for PT_LOAD.
    uint8_t relro;
    /// 1 when the object has text relocations (DT_TEXTREL or DF_TEXTREL): its read-only
    /// segments were written at load and hold private copies.
    uint8_t text_relocated;
} tv_segment;

/// Writes up to `capacity` segments of every loaded object except the kernel's vDSO into `out`,
/// in dl_iterate_phdr order. Returns how many there are (more than `capacity` when cut short).
int tv_loaded_segments(tv_segment *out, int capacity);

#endif

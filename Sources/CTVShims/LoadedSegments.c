#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <string.h>
#include "CTVLoadedSegments.h"

struct tv_segment_walk { tv_segment *out; int capacity; int count; uint32_t object; };

static int tv_has_text_relocations(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (; d->d_tag != DT_NULL; d++) {
            if (d->d_tag == DT_TEXTREL) return 1;
            if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)) return 1;
        }
    }
    return 0;
}

static int tv_segment_visit(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    struct tv_segment_walk *walk = context;
    uint32_t object = walk->object++;
    // The vDSO is the kernel's own mapping, not a file: nothing of it is ours to drop.
    if (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso")) return 0;
    uint8_t textrel = (uint8_t)tv_has_text_relocations(info);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD && p->p_type != PT_GNU_RELRO) continue;
        if (walk->count < walk->capacity) {
            tv_segment *s = &walk->out[walk->count];
            s->start = info->dlpi_addr + p->p_vaddr;
            s->end = s->start + p->p_memsz;
            s->flags = p->p_flags;
            s->object = object;
            s->relro = p->p_type == PT_GNU_RELRO;
            s->text_relocated = textrel;
        }
        walk->count++;
    }
    return 0;
}

int tv_loaded_segments(tv_segment *out, int capacity) {
    struct tv_segment_walk walk = { out, capacity, 0, 0 };
    dl_iterate_phdr(tv_segment_visit, &walk);
    return walk.count;
}

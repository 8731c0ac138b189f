// Linux system calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module does not set.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/stat.h>
#include "CTVShims.h"

int tv_rename_exchange(const char *a, const char *b) { return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE); }

size_t tv_heap_in_use(void) { return mallinfo2().uordblks; }

void tv_malloc_trim(void) { (void)malloc_trim(0); }

int tv_o_direct(void) { return O_DIRECT; }

long long tv_seek_data(int fd, long long offset) { return (long long)lseek(fd, (off_t)offset, SEEK_DATA); }

int tv_punch_hole(int fd, long long offset, long long length) {
    return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length);
}

unsigned int tv_dio_offset_alignment(int fd, unsigned int *memory_alignment) {
    struct statx info;
    *memory_alignment = 0;
#ifdef STATX_DIOALIGN
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &info) == 0 && (info.stx_mask & STATX_DIOALIGN)) {
        *memory_alignment = info.stx_dio_mem_align;
        return info.stx_dio_offset_align;
    }
#else
    (void)fd; (void)info;
#endif
    return 0;
}

int tv_file_birth(const char *path, long long *seconds, unsigned int *nanoseconds) {
    struct statx info;
    if (statx(AT_FDCWD, path, 0, STATX_BTIME, &info) != 0) return -1;
    if (!(info.stx_mask & STATX_BTIME)) return 0;
    *seconds = info.stx_btime.tv_sec;
    *nanoseconds = info.stx_btime.tv_nsec;
    return 1;
}

int tv_create_locked(const char *path, unsigned int mode) {
    char folder[PATH_MAX];
    if (strlen(path) >= sizeof folder) { errno = ENAMETOOLONG; return -1; }
    strcpy(folder, path);
    int fd = open(dirname(folder), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    if (fd >= 0) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) return fd;
        int failure = errno;
        close(fd);
        // EEXIST is the answer; anything else (no /proc, say) falls back below.
        if (failure == EEXIST) { errno = EEXIST; return -1; }
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0) (void)flock(fd, LOCK_EX | LOCK_NB);
    return fd;
}

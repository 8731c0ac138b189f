// Linux system calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module does not set.
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include "CTVShims.h"

int tv_rename_exchange(const char *a, const char *b) { return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE); }

size_t tv_heap_in_use(void) { return mallinfo2().uordblks; }

// Thin C wrappers for the OpenSSL macros (and variadic functions) Swift cannot call.
// Each function is one line over the macro it names; nothing here decides anything.
#ifndef CTVSHIMS_H
#define CTVSHIMS_H

#include <openssl/ssl.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <openssl/pkcs12.h>
#include "CTVNetShims.h"
#include "CTVTLSShims.h"
#include "CTVTunnelShims.h"
#include "CTVProgramShims.h"
#include "CTVLazyLibraries.h"
#include "CTVLoadedSegments.h"

/// EVP_EC_gen(curve): a fresh EC key on the named curve ("P-256", "P-384"); NULL on failure.
EVP_PKEY *tv_ec_keygen(const char *curve);
/// EVP_RSA_gen(bits): a fresh RSA key of `bits` bits with e = 65537; NULL on failure.
EVP_PKEY *tv_rsa_keygen(unsigned int bits);
/// OPENSSL_free(ptr).
void tv_openssl_free(void *ptr);
/// BIO_get_mem_data: points *data at the memory BIO's bytes and returns their count.
long tv_bio_get_mem_data(BIO *bio, char **data);
/// sk_GENERAL_NAME_num / sk_GENERAL_NAME_value / GENERAL_NAMES_free.
int tv_general_names_count(const GENERAL_NAMES *names);
const GENERAL_NAME *tv_general_names_value(const GENERAL_NAMES *names, int index);
void tv_general_names_free(GENERAL_NAMES *names);
/// sk_X509_new_null / sk_X509_push / sk_X509_pop_free(X509_free) / sk_X509_num / sk_X509_value.
STACK_OF(X509) *tv_x509_stack_new(void);
int tv_x509_stack_push(STACK_OF(X509) *stack, X509 *cert);
void tv_x509_stack_free_all(STACK_OF(X509) *stack);
int tv_x509_stack_count(const STACK_OF(X509) *stack);
X509 *tv_x509_stack_value(const STACK_OF(X509) *stack, int index);

/// Flags for X509_NAME_print_ex giving "CN=a, O=b" in certificate order, UTF-8 kept as is.
unsigned long tv_name_print_flags(void);

/// renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE): swaps two paths atomically (Linux ≥ 3.15);
/// 0 on success, -1 with errno (EINVAL where the file system cannot exchange).
int tv_rename_exchange(const char *a, const char *b);

/// mallinfo2().uordblks: bytes in glibc heap chunks now allocated (headers included), for the
/// memory micro-benchmarks (malloc.h is not in Swift's Glibc module).
size_t tv_heap_in_use(void);

/// malloc_trim(0): returns every arena's free whole pages to the kernel (madvise(MADV_DONTNEED)
/// on free chunks, then the top of each arena).
void tv_malloc_trim(void);

/// O_DIRECT (glibc defines it only under _GNU_SOURCE): open(2) flag for writes that skip the page cache.
int tv_o_direct(void);

/// statx(fd, STATX_DIOALIGN) (Linux ≥ 6.1): the file's direct I/O offset and memory alignment in
/// bytes; 0 when the kernel or the file system does not say (the caller picks a safe default).
unsigned int tv_dio_offset_alignment(int fd, unsigned int *memory_alignment);

/// statx(path, STATX_BTIME): the file's birth time (creation), following symbolic links. 1 with
/// `seconds` and `nanoseconds` set; 0 when the file system does not keep it; -1 (errno) when the
/// file cannot be read.
int tv_file_birth(const char *path, long long *seconds, unsigned int *nanoseconds);

/// fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE): the `length` bytes at `offset` read as
/// zeros from now on (whole blocks freed, partial ones zeroed), the file's size unchanged. 0, or
/// -1 (errno; EOPNOTSUPP where the file system cannot).
int tv_punch_hole(int fd, long long offset, long long length);

/// lseek(SEEK_DATA): the first offset at or after `offset` holding data, -1 (errno ENXIO) when
/// only holes follow to the end.
long long tv_seek_data(int fd, long long offset);

/// Creates the file at `path` (it must not exist: EEXIST) already holding an exclusive flock(2),
/// so that no other process ever sees the name unlocked: an unnamed file (O_TMPFILE) is locked,
/// then linked there (linkat through /proc/self/fd); where the file system or /proc cannot,
/// O_CREAT | O_EXCL, then the lock at once. Returns the write-only descriptor, or -1 (errno).
int tv_create_locked(const char *path, unsigned int mode);

/// Removes `cert` from `store`'s certificates, under the store's own lock (OpenSSL has no call
/// for it: X509_STORE_get0_objects, then the stack's entry deleted and freed). Returns how many
/// entries went (0 or 1). A hash-directory lookup may load the same certificate again later, if
/// the system's store holds it.
int tv_x509_store_remove_cert(X509_STORE *store, X509 *cert);

/// sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free) (NULL: nothing).
void tv_safebags_free(STACK_OF(PKCS12_SAFEBAG) *bags);
/// sk_PKCS7_pop_free(safes, PKCS7_free) (NULL: nothing).
void tv_pkcs7_stack_free(STACK_OF(PKCS7) *safes);

#endif

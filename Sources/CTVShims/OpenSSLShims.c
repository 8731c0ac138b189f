#include "CTVShims.h"
#include <openssl/crypto.h>
#include <openssl/x509_vfy.h>
#include <openssl/rsa.h>

EVP_PKEY *tv_ec_keygen(const char *curve) { return EVP_EC_gen(curve); }
EVP_PKEY *tv_rsa_keygen(unsigned int bits) { return EVP_RSA_gen(bits); }
void tv_openssl_free(void *ptr) { OPENSSL_free(ptr); }
long tv_bio_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
int tv_general_names_count(const GENERAL_NAMES *names) { return sk_GENERAL_NAME_num(names); }
const GENERAL_NAME *tv_general_names_value(const GENERAL_NAMES *names, int index) { return sk_GENERAL_NAME_value(names, index); }
void tv_general_names_free(GENERAL_NAMES *names) { GENERAL_NAMES_free(names); }
STACK_OF(X509) *tv_x509_stack_new(void) { return sk_X509_new_null(); }
int tv_x509_stack_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
void tv_x509_stack_free_all(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
int tv_x509_stack_count(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *tv_x509_stack_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
unsigned long tv_name_print_flags(void) {
    return (ASN1_STRFLGS_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) | ASN1_STRFLGS_UTF8_CONVERT | XN_FLAG_SEP_CPLUS_SPC | XN_FLAG_FN_SN;
}
void tv_safebags_free(STACK_OF(PKCS12_SAFEBAG) *bags) { sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free); }
void tv_pkcs7_stack_free(STACK_OF(PKCS7) *safes) { sk_PKCS7_pop_free(safes, PKCS7_free); }

int tv_x509_store_remove_cert(X509_STORE *store, X509 *cert) {
    int removed = 0;
    if (store == NULL || cert == NULL || X509_STORE_lock(store) != 1) return 0;
    STACK_OF(X509_OBJECT) *objects = X509_STORE_get0_objects(store);
    for (int i = sk_X509_OBJECT_num(objects) - 1; i >= 0; i--) {
        X509_OBJECT *object = sk_X509_OBJECT_value(objects, i);
        if (X509_OBJECT_get_type(object) != X509_LU_X509) continue;
        X509 *held = X509_OBJECT_get0_X509(object);
        if (held != NULL && X509_cmp(held, cert) == 0) {
            (void)sk_X509_OBJECT_delete(objects, i);
            X509_OBJECT_free(object);
            removed++;
        }
    }
    X509_STORE_unlock(store);
    return removed;
}

/* Connections per client address, counted from the moment a connection is accepted (by the front, or by a daemon's
   own listener) until libmicrohttpd reports it closed, whichever daemon serves it meanwhile. */
#include "CMicroHTTPD.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SB_ADDRESS_BUCKETS 4096

struct sb_address_entry {
    struct sb_address_entry *next;
    unsigned int count;
    unsigned char length; /* 4 or 16 */
    unsigned char bytes[16];
};

struct sb_addresses {
    pthread_mutex_t lock; /* guards the buckets and every entry in them */
    unsigned int limit;   /* 0: nothing is counted */
    struct sb_address_entry *buckets[SB_ADDRESS_BUCKETS];
};

sb_addresses *sb_addresses_create(unsigned int limit) {
    sb_addresses *table = calloc(1, sizeof *table);
    if (table == NULL) return NULL;
    pthread_mutex_init(&table->lock, NULL);
    table->limit = limit;
    return table;
}

void sb_addresses_free(sb_addresses *table) {
    if (table == NULL) return;
    for (size_t i = 0; i < SB_ADDRESS_BUCKETS; i++) {
        struct sb_address_entry *entry = table->buckets[i];
        while (entry != NULL) {
            struct sb_address_entry *next = entry->next;
            free(entry);
            entry = next;
        }
    }
    pthread_mutex_destroy(&table->lock);
    free(table);
}

/* The address's bytes (an IPv4-mapped IPv6 address as the IPv4 one it is); 0 for anything not IP. */
static unsigned char sb_address_key(const struct sockaddr *address, socklen_t length, unsigned char key[16]) {
    if (address == NULL) return 0;
    if (address->sa_family == AF_INET && length >= (socklen_t)sizeof(struct sockaddr_in)) {
        memcpy(key, &((const struct sockaddr_in *)address)->sin_addr, 4);
        return 4;
    }
    if (address->sa_family == AF_INET6 && length >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const unsigned char *bytes = ((const struct sockaddr_in6 *)address)->sin6_addr.s6_addr;
        static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        if (memcmp(bytes, mapped, 12) == 0) {
            memcpy(key, bytes + 12, 4);
            return 4;
        }
        memcpy(key, bytes, 16);
        return 16;
    }
    return 0;
}

static size_t sb_address_bucket(const unsigned char *key, unsigned char length) {
    uint32_t hash = 2166136261u; /* FNV-1a */
    for (unsigned char i = 0; i < length; i++) hash = (hash ^ key[i]) * 16777619u;
    return hash % SB_ADDRESS_BUCKETS;
}

static struct sb_address_entry **sb_address_find(sb_addresses *table, const unsigned char *key, unsigned char length) {
    struct sb_address_entry **link = &table->buckets[sb_address_bucket(key, length)];
    while (*link != NULL && ((*link)->length != length || memcmp((*link)->bytes, key, length) != 0)) link = &(*link)->next;
    return link;
}

int sb_addresses_enter(sb_addresses *table, const struct sockaddr *address, socklen_t length) {
    if (table == NULL || table->limit == 0) return 1;
    unsigned char key[16];
    unsigned char key_length = sb_address_key(address, length, key);
    if (key_length == 0) return 1;
    int admitted = 1;
    pthread_mutex_lock(&table->lock);
    struct sb_address_entry **link = sb_address_find(table, key, key_length);
    if (*link == NULL) {
        struct sb_address_entry *entry = calloc(1, sizeof *entry);
        if (entry == NULL) {
            admitted = 0; /* out of memory: refusing is the safe side */
        } else {
            entry->length = key_length;
            memcpy(entry->bytes, key, key_length);
            entry->count = 1;
            *link = entry;
        }
    } else if ((*link)->count >= table->limit) {
        admitted = 0;
    } else {
        (*link)->count++;
    }
    pthread_mutex_unlock(&table->lock);
    return admitted;
}

void sb_addresses_leave(sb_addresses *table, const struct sockaddr *address, socklen_t length) {
    if (table == NULL || table->limit == 0) return;
    unsigned char key[16];
    unsigned char key_length = sb_address_key(address, length, key);
    if (key_length == 0) return;
    pthread_mutex_lock(&table->lock);
    struct sb_address_entry **link = sb_address_find(table, key, key_length);
    struct sb_address_entry *entry = *link;
    if (entry != NULL && --entry->count == 0) {
        *link = entry->next;
        free(entry);
    }
    pthread_mutex_unlock(&table->lock);
}

/* The compile cache (enpu_compile_cache, compiler.h): what the cost model and
 * the tiling search computed, keyed by everything they read.
 *
 * Why a cache: the same sub-problem comes back many times -- the row strips
 * of one layer are equal but for the first and the last, the program model
 * costs every emitted chain again, and a sweep compiles the same layers for
 * hundreds of architectures that differ only in what the layer does not
 * depend on (DRAM, clock, memory sizes).  Keys are built by the callers
 * (cost.c, tile.c) from the fields they read, so two keys are equal exactly
 * when the answers are.
 *
 * A chained hash table of byte keys to byte values, under one mutex (the
 * sweep's threads share it).  When the entries' bytes would pass the budget
 * the table is emptied first: a sweep's working set is its current points'
 * layers, and a full table is cheaper to refill than to age. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"

typedef struct centry {
    struct centry *next;
    uint64_t hash;
    size_t klen, vlen;
    uint8_t data[]; /* key, then value */
} centry;

struct enpu_compile_cache {
    pthread_mutex_t lock;
    centry **bucket;
    size_t nbucket, n, bytes, budget;
    uint64_t hits, misses;
};

enpu_compile_cache *enpu_compile_cache_new(size_t budget_bytes) {
    enpu_compile_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->nbucket = 1024;
    c->bucket = calloc(c->nbucket, sizeof *c->bucket);
    if (!c->bucket) {
        free(c);
        return NULL;
    }
    c->budget = budget_bytes ? budget_bytes : ENPU_COMPILE_CACHE_DEFAULT;
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void clear_locked(enpu_compile_cache *c) {
    for (size_t b = 0; b < c->nbucket; b++) {
        for (centry *e = c->bucket[b], *nx; e; e = nx) {
            nx = e->next;
            free(e);
        }
        c->bucket[b] = NULL;
    }
    c->n = c->bytes = 0;
}

void enpu_compile_cache_free(enpu_compile_cache *c) {
    if (!c) return;
    clear_locked(c);
    free(c->bucket);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void enpu_compile_cache_stats(enpu_compile_cache *c, uint64_t *hits, uint64_t *misses,
                              uint64_t *entries) {
    pthread_mutex_lock(&c->lock);
    if (hits) *hits = c->hits;
    if (misses) *misses = c->misses;
    if (entries) *entries = c->n;
    pthread_mutex_unlock(&c->lock);
}

/* FNV-1a over the key, 8 bytes at a time (keys are int64 arrays). */
static uint64_t hash_key(const void *key, size_t n) {
    const uint8_t *p = key;
    uint64_t h = 1469598103934665603ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

size_t cc_cache_get(enpu_compile_cache *c, const void *key, size_t klen, void *val, size_t vcap) {
    if (!c) return 0;
    uint64_t h = hash_key(key, klen);
    size_t got = 0;
    pthread_mutex_lock(&c->lock);
    for (centry *e = c->bucket[h & (c->nbucket - 1)]; e; e = e->next)
        if (e->hash == h && e->klen == klen && memcmp(e->data, key, klen) == 0) {
            if (e->vlen <= vcap) {
                memcpy(val, e->data + klen, e->vlen);
                got = e->vlen;
            }
            break;
        }
    if (got) c->hits++;
    else c->misses++;
    pthread_mutex_unlock(&c->lock);
    return got;
}

static void grow_locked(enpu_compile_cache *c) {
    size_t nb = c->nbucket * 4;
    centry **b = calloc(nb, sizeof *b);
    if (!b) return; /* longer chains, still correct */
    for (size_t i = 0; i < c->nbucket; i++)
        for (centry *e = c->bucket[i], *nx; e; e = nx) {
            nx = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    free(c->bucket);
    c->bucket = b, c->nbucket = nb;
}

void cc_cache_put(enpu_compile_cache *c, const void *key, size_t klen, const void *val, size_t vlen) {
    if (!c || vlen == 0) return;
    size_t sz = sizeof(centry) + klen + vlen;
    if (sz > c->budget) return;
    uint64_t h = hash_key(key, klen);
    centry *e = malloc(sz);
    if (!e) return; /* a cache that cannot grow only recomputes */
    e->hash = h, e->klen = klen, e->vlen = vlen;
    memcpy(e->data, key, klen);
    memcpy(e->data + klen, val, vlen);
    pthread_mutex_lock(&c->lock);
    for (centry *o = c->bucket[h & (c->nbucket - 1)]; o; o = o->next)
        if (o->hash == h && o->klen == klen && memcmp(o->data, key, klen) == 0) {
            /* another thread computed it meanwhile: the same answer */
            pthread_mutex_unlock(&c->lock);
            free(e);
            return;
        }
    if (c->bytes + sz > c->budget) clear_locked(c);
    if (c->n >= c->nbucket) grow_locked(c);
    e->next = c->bucket[h & (c->nbucket - 1)];
    c->bucket[h & (c->nbucket - 1)] = e;
    c->n++, c->bytes += sz;
    pthread_mutex_unlock(&c->lock);
}

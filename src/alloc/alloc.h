/* moat's allocator (src/alloc/alloc.c): malloc of the musl build of the CLI
 * (src/alloc/override.c). Prefixed so that tests can drive it beside
 * the libc's own in any build. */
#ifndef MOAT_ALLOC_ALLOC_H
#define MOAT_ALLOC_ALLOC_H

#include <stddef.h>

void *moat_alloc_malloc(size_t n);
void moat_alloc_free(void *p);
void *moat_alloc_calloc(size_t a, size_t b);
void *moat_alloc_realloc(void *p, size_t n);
void *moat_alloc_aligned(size_t align, size_t n);
size_t moat_alloc_usable_size(void *p);
void moat_alloc_atfork_prepare(void);
void moat_alloc_atfork_parent(void);
void moat_alloc_atfork_child(void);

#endif

/* malloc and its family are moat's allocator (src/alloc/alloc.c) in the
 * static musl build of the CLI; linked into that executable only
 * (meson.build). musl supports replacing malloc this way. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "alloc/alloc.h"

void *malloc(size_t n)
{
	return moat_alloc_malloc(n);
}

void free(void *p)
{
	moat_alloc_free(p);
}

void *calloc(size_t a, size_t b)
{
	return moat_alloc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	return moat_alloc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return moat_alloc_aligned(align, n);
}

void *memalign(size_t align, size_t n);
void *memalign(size_t align, size_t n)
{
	return moat_alloc_aligned(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *))
		return EINVAL;
	p = moat_alloc_aligned(align, n);
	if (!p)
		return errno;
	*out = p;
	return 0;
}

size_t malloc_usable_size(void *p);
size_t malloc_usable_size(void *p)
{
	return moat_alloc_usable_size(p);
}

/* a child forked while another thread allocates gets a consistent heap */
__attribute__((constructor)) static void alloc_atfork(void)
{
	pthread_atfork(moat_alloc_atfork_prepare, moat_alloc_atfork_parent, moat_alloc_atfork_child);
}

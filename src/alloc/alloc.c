/* moat's allocator for the musl build of the CLI (src/alloc/override.c
 * makes it malloc). glibc builds keep glibc's malloc.
 *
 * Why: musl's allocator gives every group of freed blocks back to the
 * kernel at once; one `moat run` made some sixty mmap and munmap calls, and
 * each munmap while the early child shares the memory is a TLB flush on the
 * other CPU. mimalloc (built for musl) spread the same allocations over
 * forty more pages. This one packs blocks of every size in one region, as
 * they come, and keeps freed blocks for reuse by size class: about the
 * page faults of a bump allocator (docs/benchmarks.md, "Sandbox start-up").
 *
 * Layout: every block has a 16-byte header (magic, size class, capacity)
 * before a 16-byte aligned payload. Classes are multiples of 16 up to 256
 * bytes, then four per doubling up to 256 KiB; a freed block goes on its
 * class's list. Larger blocks are mapped alone and unmapped when freed.
 * Regions of 1 MiB come from mmap and are never returned (moat's processes
 * are short, or, for `moat mcp`, reuse the same sizes call after call).
 *
 * Misuse stops the process: freeing a block twice, a pointer that is no
 * block's, a header overwritten (abort(), as glibc and musl do). One lock;
 * fork keeps it consistent (moat_alloc_atfork_*). */
#include "alloc/alloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HDR 16u
#define REGION (1u << 20)
#define SMALL_MAX 256u		/* classes 0..15: 16, 32, .. 256 */
#define LARGE_MIN (256u << 10)	/* above this: a mapping of its own */
#define NCLASS (16 + 4 * 10)	/* 256 B .. 256 KiB in quarter steps */
#define CLASS_MAPPED 0xffffu

#define MAGIC_USED 0x6d6f6174u /* "moat" */
#define MAGIC_FREE 0x66726565u /* "free" */
#define MAGIC_ALIGNED 0x616c676eu /* "algn": an aligned block's offset */

struct hdr {
	uint32_t magic;
	uint32_t cls;
	uint64_t cap; /* payload bytes (mapped: the mapping's length) */
};

struct freeblk {
	struct freeblk *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct freeblk *lists[NCLASS];
static char *cur, *end;

static _Noreturn void corrupt(void)
{
	static const char msg[] = "moat: heap corruption detected (bad free or overwritten block)\n";
	ssize_t w = write(2, msg, sizeof(msg) - 1);

	(void)w;
	abort();
}

/* The class of a request and its capacity; NCLASS when it is mapped alone. */
static unsigned class_of(size_t n, size_t *cap)
{
	unsigned k;
	size_t base, step;

	if (n <= SMALL_MAX) {
		size_t c = n ? (n + 15) & ~(size_t)15 : 16;

		*cap = c;
		return (unsigned)(c / 16 - 1);
	}
	if (n > LARGE_MIN)
		return NCLASS;
	/* 2^k < n <= 2^(k+1), k >= 8: four classes 2^k * (1.25, 1.5, 1.75, 2) */
	k = 63u - (unsigned)__builtin_clzll((unsigned long long)(n - 1));
	base = (size_t)1 << k;
	step = base / 4;
	for (unsigned q = 1; q <= 4; q++)
		if (n <= base + q * step) {
			*cap = base + q * step;
			return 16 + (k - 8) * 4 + (q - 1);
		}
	return NCLASS; /* not reached */
}

/* The capacity of class i. */
static size_t class_cap(unsigned i)
{
	unsigned k, q;

	if (i < 16)
		return 16 * ((size_t)i + 1);
	k = 8 + (i - 16) / 4;
	q = (i - 16) % 4 + 1;
	return ((size_t)1 << k) + q * (((size_t)1 << k) / 4);
}

static void *map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Carve a block of class cls and capacity cap from the region (lock held). */
static struct hdr *carve(unsigned cls, size_t cap)
{
	struct hdr *h;

	if (!cur || (size_t)(end - cur) < HDR + cap) {
		char *r = map(REGION);

		if (!r)
			return NULL;
		/* the rest of the old region goes to the lists in the largest
		 * pieces that fit, so no page that was touched is wasted */
		while (cur && (size_t)(end - cur) >= HDR + 16) {
			size_t room = (size_t)(end - cur) - HDR;
			unsigned pc = 0;

			while (pc + 1 < NCLASS && class_cap(pc + 1) <= room)
				pc++;
			h = (struct hdr *)cur;
			h->magic = MAGIC_FREE;
			h->cls = pc;
			h->cap = class_cap(pc);
			((struct freeblk *)(h + 1))->next = lists[pc];
			lists[pc] = (struct freeblk *)(h + 1);
			cur += HDR + h->cap;
		}
		cur = r;
		end = r + REGION;
	}
	h = (struct hdr *)cur;
	cur += HDR + cap;
	h->cls = cls;
	h->cap = cap;
	return h;
}

void *moat_alloc_malloc(size_t n)
{
	size_t cap = 0;
	unsigned cls = class_of(n, &cap);
	struct hdr *h;

	if (cls == NCLASS) {
		size_t len;

		if (n > SIZE_MAX - HDR - 4095) {
			errno = ENOMEM;
			return NULL;
		}
		len = (n + HDR + 4095) & ~(size_t)4095;
		h = map(len);
		if (!h) {
			errno = ENOMEM;
			return NULL;
		}
		h->magic = MAGIC_USED;
		h->cls = CLASS_MAPPED;
		h->cap = len;
		return h + 1;
	}
	pthread_mutex_lock(&lock);
	if (lists[cls]) {
		struct freeblk *f = lists[cls];

		h = (struct hdr *)f - 1;
		if (h->magic != MAGIC_FREE || h->cls != cls || ((uintptr_t)f->next & 15))
			corrupt();
		lists[cls] = f->next;
	} else {
		h = carve(cls, cap);
	}
	pthread_mutex_unlock(&lock);
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->magic = MAGIC_USED;
	return h + 1;
}

/* The header of a block handed out (aligned blocks: of the block around). */
static struct hdr *header(void *p)
{
	struct hdr *h = (struct hdr *)p - 1;

	if ((uintptr_t)p & 15)
		corrupt();
	if (h->magic == MAGIC_ALIGNED) {
		if (!h->cap || (h->cap & 15) || h->cap > (uintptr_t)p)
			corrupt();
		h = (struct hdr *)((char *)p - h->cap) - 1;
	}
	if (h->magic != MAGIC_USED)
		corrupt();
	if (h->cls == CLASS_MAPPED ? ((uintptr_t)h & 4095) || (h->cap & 4095) || h->cap <= LARGE_MIN
				   : h->cls >= NCLASS || h->cap != class_cap(h->cls))
		corrupt();
	return h;
}

void moat_alloc_free(void *p)
{
	struct hdr *h;

	if (!p)
		return;
	h = header(p);
	if (h->cls == CLASS_MAPPED) {
		h->magic = MAGIC_FREE;
		munmap(h, h->cap);
		return;
	}
	pthread_mutex_lock(&lock);
	if (h->magic != MAGIC_USED) /* a double free racing another thread's */
		corrupt();
	h->magic = MAGIC_FREE;
	((struct freeblk *)(h + 1))->next = lists[h->cls];
	lists[h->cls] = (struct freeblk *)(h + 1);
	pthread_mutex_unlock(&lock);
}

void *moat_alloc_calloc(size_t a, size_t b)
{
	size_t n;
	void *p;

	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	p = moat_alloc_malloc(n);
	if (p)
		memset(p, 0, n);
	return p;
}

size_t moat_alloc_usable_size(void *p)
{
	struct hdr *h;

	if (!p)
		return 0;
	h = header(p);
	if (h->cls == CLASS_MAPPED)
		return h->cap - HDR - (size_t)((char *)p - (char *)(h + 1));
	return h->cap - (size_t)((char *)p - (char *)(h + 1));
}

void *moat_alloc_realloc(void *p, size_t n)
{
	size_t have;
	void *q;

	if (!p)
		return moat_alloc_malloc(n);
	have = moat_alloc_usable_size(p);
	if (n <= have && (n > have / 2 || have <= 16))
		return p;
	q = moat_alloc_malloc(n);
	if (!q)
		return n <= have ? p : NULL; /* a shrink never fails */
	memcpy(q, p, n < have ? n : have);
	moat_alloc_free(p);
	return q;
}

void *moat_alloc_aligned(size_t align, size_t n)
{
	char *p, *a;
	struct hdr *ah;

	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	if (align <= 16)
		return moat_alloc_malloc(n);
	if (n > SIZE_MAX - align - HDR) {
		errno = ENOMEM;
		return NULL;
	}
	p = moat_alloc_malloc(n + align + HDR);
	if (!p)
		return NULL;
	a = (char *)(((uintptr_t)p + HDR + align - 1) & ~(uintptr_t)(align - 1));
	ah = (struct hdr *)a - 1;
	ah->magic = MAGIC_ALIGNED;
	ah->cls = 0;
	ah->cap = (uint64_t)(a - p); /* the payload it belongs to starts cap bytes before */
	return a;
}

void moat_alloc_atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void moat_alloc_atfork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void moat_alloc_atfork_child(void)
{
	pthread_mutex_unlock(&lock);
}

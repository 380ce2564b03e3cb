/* moat's allocator (src/alloc/alloc.c), driven beside the libc's own: every
 * size class handed out and reused, contents kept across realloc, blocks
 * never overlapping, alignment, calloc's overflow, large mappings, many
 * threads at once, and misuse stopping the process (a child checked from
 * outside: it must die of SIGABRT). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc/alloc.h"
#include "tap.h"

static int dies_of_abort(void (*fn)(void))
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		close(2); /* the message goes nowhere */
		fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 0;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void double_free(void)
{
	void *p = moat_alloc_malloc(40);

	moat_alloc_free(p);
	moat_alloc_free(p);
}

static void bad_pointer(void)
{
	char *p = moat_alloc_malloc(64);

	memset(p, 0, 64);
	moat_alloc_free(p + 16);
}

static void overwritten_header(void)
{
	char *p = moat_alloc_malloc(64);

	memset(p - 16, 'A', 16); /* an underflow into the header */
	moat_alloc_free(p);
}

static void freed_then_written(void)
{
	char *p = moat_alloc_malloc(64);

	moat_alloc_free(p);
	memset(p - 16, 'B', 16); /* a use after free over the header */
	(void)moat_alloc_malloc(64);
}

static void class_overwritten(void)
{
	char *a = moat_alloc_malloc(48), *b = moat_alloc_malloc(48);

	(void)a;
	/* an overflow from a into b's header that keeps the magic but
	 * names a larger class: b must not be filed under it */
	((uint32_t *)(void *)(b - 16))[1] = 20;
	moat_alloc_free(b);
}

static void unaligned_free(void)
{
	char *p = moat_alloc_malloc(64);

	moat_alloc_free(p + 8);
}

static void freed_link_overwritten(void)
{
	char *p = moat_alloc_malloc(64);

	moat_alloc_free(p);
	memset(p, 'A', 8); /* the free list's link */
	(void)moat_alloc_malloc(64);
	(void)moat_alloc_malloc(64);
}

#define NTHREADS 8

static void *worker(void *arg)
{
	uintptr_t seed = (uintptr_t)arg * 2654435761u + 1;
	void *keep[64] = {0};
	int bad = 0;

	for (int i = 0; i < 20000; i++) {
		unsigned slot, n;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		slot = (unsigned)(seed >> 33) % 64;
		n = (unsigned)(seed >> 40) % 5000;
		if (keep[slot]) {
			unsigned char *c = keep[slot];
			size_t have = moat_alloc_usable_size(c);

			/* the block still holds the byte it was filled with */
			for (size_t k = 0; k < have && k < 64; k++)
				bad |= c[k] != (unsigned char)slot;
			moat_alloc_free(c);
		}
		keep[slot] = moat_alloc_malloc(n);
		if (!keep[slot])
			return (void *)1;
		memset(keep[slot], (int)slot, n);
		/* re-fill what usable_size promises */
		memset(keep[slot], (int)slot, moat_alloc_usable_size(keep[slot]));
	}
	for (int s = 0; s < 64; s++)
		moat_alloc_free(keep[s]);
	return (void *)(uintptr_t)bad;
}

int main(void)
{
	/* every size up to 300 KiB in steps, filled, then checked for overlap */
	enum { N = 600 };
	unsigned char *blk[N];
	size_t len[N];
	int ok = 1, aligned = 1;

	for (int i = 0; i < N; i++) {
		len[i] = (size_t)i * (size_t)i + (size_t)i % 7;
		blk[i] = moat_alloc_malloc(len[i]);
		if (!blk[i]) {
			ok = 0;
			break;
		}
		aligned &= ((uintptr_t)blk[i] % 16) == 0;
		ok &= moat_alloc_usable_size(blk[i]) >= len[i];
		memset(blk[i], i & 0xff, len[i]);
	}
	CHECK(ok);
	CHECK(aligned);
	for (int i = 0; i < N && ok; i++)
		for (size_t k = 0; k < len[i]; k++)
			if (blk[i][k] != (unsigned char)(i & 0xff)) {
				ok = 0;
				break;
			}
	tap_ok(ok, "600 blocks from 0 to 350 KiB keep their contents (no overlap)");
	for (int i = 0; i < N; i++)
		moat_alloc_free(blk[i]);

	/* a freed block is reused for its size class */
	{
		void *a = moat_alloc_malloc(100), *b;

		moat_alloc_free(a);
		b = moat_alloc_malloc(97);
		tap_ok(a == b, "a freed block is handed out again for its class");
		moat_alloc_free(b);
	}

	/* realloc keeps the contents, growing and shrinking */
	{
		char *p = moat_alloc_malloc(10);
		int same = 1;

		memcpy(p, "0123456789", 10);
		for (size_t n = 20; n < 600000; n = n * 3 / 2) {
			p = moat_alloc_realloc(p, n);
			same &= p && !memcmp(p, "0123456789", 10);
		}
		p = moat_alloc_realloc(p, 12);
		same &= p && !memcmp(p, "0123456789", 10);
		tap_ok(same, "realloc keeps the contents from 10 bytes to 600 KiB and back");
		moat_alloc_free(p);
		p = moat_alloc_realloc(NULL, 33);
		tap_ok(p != NULL && moat_alloc_usable_size(p) >= 33, "realloc(NULL, n) allocates");
		moat_alloc_free(p);
	}

	/* calloc zeroes reused memory and refuses an overflowing product */
	{
		unsigned char *p = moat_alloc_malloc(200), *q;
		int zero = 1;

		memset(p, 0xee, 200);
		moat_alloc_free(p);
		q = moat_alloc_calloc(25, 8);
		for (int i = 0; i < 200; i++)
			zero &= q[i] == 0;
		tap_ok(zero, "calloc zeroes a reused block");
		moat_alloc_free(q);
		errno = 0;
		tap_ok(moat_alloc_calloc(SIZE_MAX / 2, 3) == NULL && errno == ENOMEM,
		       "calloc of an overflowing product fails with ENOMEM");
		errno = 0;
		tap_ok(moat_alloc_malloc(SIZE_MAX - 8) == NULL && errno == ENOMEM,
		       "malloc(SIZE_MAX - 8) fails with ENOMEM");
	}

	/* aligned allocations */
	{
		int good = 1;

		for (size_t a = 1; a <= 65536; a *= 2) {
			char *p = moat_alloc_aligned(a, 1000);

			good &= p && ((uintptr_t)p % a) == 0 && moat_alloc_usable_size(p) >= 1000;
			if (p)
				memset(p, 1, 1000);
			p = moat_alloc_realloc(p, 5000);
			good &= p != NULL && p[999] == 1;
			moat_alloc_free(p);
		}
		tap_ok(good, "aligned blocks from 1 to 64 KiB alignment: aligned, usable, reallocated, freed");
		errno = 0;
		tap_ok(moat_alloc_aligned(24, 10) == NULL && errno == EINVAL,
		       "an alignment that is no power of two is refused");
	}

	/* threads at once */
	{
		pthread_t t[NTHREADS];
		int bad = 0;

		for (uintptr_t i = 0; i < NTHREADS; i++)
			bad |= pthread_create(&t[i], NULL, worker, (void *)i) != 0;
		for (int i = 0; i < NTHREADS; i++) {
			void *r = NULL;

			pthread_join(t[i], &r);
			bad |= r != NULL;
		}
		tap_ok(!bad, "8 threads x 20000 random allocations: every block keeps its bytes");
	}

	tap_ok(dies_of_abort(double_free), "a double free stops the process (SIGABRT)");
	tap_ok(dies_of_abort(bad_pointer), "freeing a pointer into a block stops the process");
	tap_ok(dies_of_abort(overwritten_header), "a header overwritten by an underflow stops the process at free");
	tap_ok(dies_of_abort(freed_then_written), "a freed block written over stops the process when reused");
	tap_ok(dies_of_abort(class_overwritten),
	       "a header whose class was overwritten (magic kept) stops the process");
	tap_ok(dies_of_abort(unaligned_free), "freeing a pointer that is not 16-aligned stops the process");
	tap_ok(dies_of_abort(freed_link_overwritten),
	       "a freed block's list link overwritten stops the process (not a stray write)");
	return tap_done();
}

/* The Landlock ABI degradation table (moat_landlock_masks), every ABI from
 * "none" to beyond the newest we know, and the plan-rights translation.
 * Pure: no Landlock syscall is made (except the last check, which compares
 * the running kernel's answer with what the probe reports). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/plan.h"
#include "sandbox/sandbox.h"
#include "tap.h"

#define FS_V1                                                                                      \
	(MOAT_LL_FS_EXECUTE | MOAT_LL_FS_WRITE_FILE | MOAT_LL_FS_READ_FILE | MOAT_LL_FS_READ_DIR | \
	 MOAT_LL_FS_REMOVE_DIR | MOAT_LL_FS_REMOVE_FILE | MOAT_LL_FS_MAKE_CHAR |                   \
	 MOAT_LL_FS_MAKE_DIR | MOAT_LL_FS_MAKE_REG | MOAT_LL_FS_MAKE_SOCK | MOAT_LL_FS_MAKE_FIFO | \
	 MOAT_LL_FS_MAKE_BLOCK | MOAT_LL_FS_MAKE_SYM)
#define FS_V2 (FS_V1 | MOAT_LL_FS_REFER)
#define FS_V3 (FS_V2 | MOAT_LL_FS_TRUNCATE)
#define FS_V5 (FS_V3 | MOAT_LL_FS_IOCTL_DEV)
#define NET_V4 (MOAT_LL_NET_BIND_TCP | MOAT_LL_NET_CONNECT_TCP)
#define SCOPE_V6 (MOAT_LL_SCOPE_ABSTRACT_UNIX_SOCKET | MOAT_LL_SCOPE_SIGNAL)
#define FLAGS_V7                                                                                   \
	(MOAT_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF | MOAT_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON |         \
	 MOAT_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF)

static const struct {
	int abi;
	int used;
	uint64_t fs, net, scoped;
	uint32_t flags;
} table[] = {
    {-1, 0, 0, 0, 0, 0}, /* a fake "no landlock" (errno) */
    {0, 0, 0, 0, 0, 0},	 /* no landlock */
    {1, 1, FS_V1, 0, 0, 0},
    {2, 2, FS_V2, 0, 0, 0},
    {3, 3, FS_V3, 0, 0, 0},
    {4, 4, FS_V3, NET_V4, 0, 0},
    {5, 5, FS_V5, NET_V4, 0, 0},
    {6, 6, FS_V5, NET_V4, SCOPE_V6, 0},
    {7, 7, FS_V5, NET_V4, SCOPE_V6, FLAGS_V7},
    /* a newer kernel: never handle rights we do not know */
    {8, 7, FS_V5, NET_V4, SCOPE_V6, FLAGS_V7},
    {100, 7, FS_V5, NET_V4, SCOPE_V6, FLAGS_V7},
};

int main(void)
{
	struct moat_ll_masks m;
	int kabi, kerr;

	/* the uapi values we carry (the kernel's, not ours to choose) */
	CHECK_INT(MOAT_LL_FS_REFER, 1ULL << 13);
	CHECK_INT(MOAT_LL_FS_TRUNCATE, 1ULL << 14);
	CHECK_INT(MOAT_LL_FS_IOCTL_DEV, 1ULL << 15);
	CHECK_INT(MOAT_LL_NET_CONNECT_TCP, 2);
	CHECK_INT(MOAT_LL_SCOPE_SIGNAL, 2);
	CHECK_INT(MOAT_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF, 4);

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		moat_landlock_masks(table[i].abi, &m);
		CHECKF(m.abi == table[i].used, "abi %d -> used %d (got %d)", table[i].abi,
		       table[i].used, m.abi);
		CHECKF(m.fs == table[i].fs, "abi %d fs 0x%llx (want 0x%llx)", table[i].abi,
		       (unsigned long long)m.fs, (unsigned long long)table[i].fs);
		CHECKF(m.net == table[i].net, "abi %d net", table[i].abi);
		CHECKF(m.scoped == table[i].scoped, "abi %d scoped", table[i].abi);
		CHECKF(m.restrict_flags == table[i].flags, "abi %d restrict flags", table[i].abi);
	}

	/* plan rights -> landlock rights, limited by the ABI */
	moat_landlock_masks(7, &m);
	CHECK(moat_landlock_access(MOAT_FS_READ, &m) ==
	      (MOAT_LL_FS_READ_FILE | MOAT_LL_FS_READ_DIR));
	CHECK(moat_landlock_access(MOAT_FS_EXEC, &m) == MOAT_LL_FS_EXECUTE);
	CHECK(moat_landlock_access(MOAT_FS_WRITE, &m) & MOAT_LL_FS_TRUNCATE);
	CHECK(moat_landlock_access(MOAT_FS_WRITE, &m) & MOAT_LL_FS_REFER);
	/* SECURITY: device nodes are never creatable, even where writes are allowed */
	CHECK(
	    !(moat_landlock_access(MOAT_FS_READ | MOAT_FS_WRITE | MOAT_FS_EXEC | MOAT_FS_DEV, &m) &
	      (MOAT_LL_FS_MAKE_CHAR | MOAT_LL_FS_MAKE_BLOCK)));
	/* reading never implies writing */
	CHECK(!(moat_landlock_access(MOAT_FS_READ | MOAT_FS_EXEC, &m) &
		(MOAT_LL_FS_WRITE_FILE | MOAT_LL_FS_REMOVE_FILE | MOAT_LL_FS_MAKE_REG |
		 MOAT_LL_FS_TRUNCATE)));
	CHECK(moat_landlock_access(MOAT_FS_DEV, &m) == MOAT_LL_FS_IOCTL_DEV);
	moat_landlock_masks(2, &m);
	CHECK(!(moat_landlock_access(MOAT_FS_WRITE, &m) & MOAT_LL_FS_TRUNCATE));
	CHECK(moat_landlock_access(MOAT_FS_WRITE, &m) & MOAT_LL_FS_REFER);
	CHECK(moat_landlock_access(MOAT_FS_DEV, &m) == 0);
	moat_landlock_masks(1, &m);
	CHECK(!(moat_landlock_access(MOAT_FS_WRITE, &m) & MOAT_LL_FS_REFER));
	moat_landlock_masks(0, &m);
	CHECK(moat_landlock_access(MOAT_FS_READ | MOAT_FS_WRITE, &m) == 0);

	/* every right the newest ABI handles is one of the table's */
	moat_landlock_masks(MOAT_LL_ABI_MAX, &m);
	CHECK((m.fs & ~FS_V5) == 0);

	/* the running kernel: the probe and a direct query agree */
	kabi = moat_landlock_abi(&kerr);
	CHECKF(kabi >= 0, "landlock abi query (got %d, errno %d)", kabi, kerr);
	if (kabi == 0)
		CHECKF(kerr == ENOSYS || kerr == EOPNOTSUPP, "no landlock: ENOSYS or EOPNOTSUPP");
	{
		struct moat_kfeatures kf;

		moat_probe(&kf);
		CHECK_INT(kf.landlock_abi, kabi);
	}
	return tap_done();
}

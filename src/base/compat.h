/* System calls and flags the C library wraps late, differently or not at
 * all (renameat2, getdents64 into a raw buffer, statx attributes), and a
 * thread-safe strerror.
 *
 * Header-only, no state. */
#ifndef MOAT_BASE_COMPAT_H
#define MOAT_BASE_COMPAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1u << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1u << 1)
#endif
#ifndef W_EXITCODE
#define W_EXITCODE(ret, sig) (((ret) << 8) | (sig))
#endif

/* The message of errno e, thread-safe: GNU strerror_r returns it (maybe
 * not in buf), the POSIX one fills buf. */
static inline const char *moat_strerror(int e, char *buf, size_t n)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
	return strerror_r(e, buf, n);
#else
	if (strerror_r(e, buf, n) != 0)
		snprintf(buf, n, "error %d", e);
	return buf;
#endif
}

/* renameat2(2): 0, or -1 with errno set */
static inline int moat_renameat2(int olddfd, const char *oldpath, int newdfd, const char *newpath,
				 unsigned int flags)
{
	return (int)syscall(SYS_renameat2, olddfd, oldpath, newdfd, newpath, flags);
}

/* getdents64(2) into a caller's buffer: bytes read, 0 at the end, or -1
 * with errno set */
static inline long moat_getdents64(int fd, void *buf, size_t n)
{
	return syscall(SYS_getdents64, fd, buf, n);
}

/* Is dfd/name (AT_EMPTY_PATH with "") an encrypted file or directory
 * (fscrypt), by statx(2), which neither libc wraps the same way? Such a
 * directory lists encoded names while it is locked, and the real ones as
 * soon as its key is added, without a change of its times or an inotify
 * event. When it cannot be told: true (the caller then trusts nothing). */
static inline bool moat_encrypted_at(int dfd, const char *name, int flags)
{
	struct {
		uint32_t mask, blksize;
		uint64_t attributes;
		uint32_t nlink, uid, gid;
		uint16_t mode, pad;
		uint64_t ino, size, blocks, attributes_mask;
		unsigned char rest[256 - 64];
	} x;
	const uint64_t encrypted = 0x800; /* STATX_ATTR_ENCRYPTED */

	memset(&x, 0, sizeof(x));
	if (syscall(SYS_statx, dfd, name, flags, 0, &x) != 0)
		return true;
	return (x.attributes_mask & encrypted) && (x.attributes & encrypted);
}

#endif

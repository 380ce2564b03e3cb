/* System calls without errno, for the sandbox child while it runs beside
 * its parent.
 *
 * The child of an early start (spawn.c) shares the parent's memory and,
 * with it, the parent's thread pointer: glibc's wrappers would write a
 * failure into the parent's errno while the parent is using it. These
 * helpers return -errno instead and touch no thread-local state. On
 * architectures without an inline implementation the early start is off
 * (MOAT_RAW_SYSCALLS is 0) and the helpers fall back to syscall(2), used
 * only by a child that runs alone (the parent waits, as with vfork).
 *
 * Header-only; nothing here may allocate, lock or print. */
#ifndef MOAT_SANDBOX_RAWSYS_H
#define MOAT_SANDBOX_RAWSYS_H

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) && !defined(__ILP32__)
#define MOAT_RAW_SYSCALLS 1
static inline long moat_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define MOAT_RAW_SYSCALLS 1
static inline long moat_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory", "cc");
	return x0;
}
#else
#define MOAT_RAW_SYSCALLS 0
static inline long moat_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(n, a, b, c, d, e, f);

	return r < 0 ? -errno : r;
}
#endif

#define moat_sys0(n) moat_sys6((n), 0, 0, 0, 0, 0, 0)
#define moat_sys1(n, a) moat_sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define moat_sys2(n, a, b) moat_sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define moat_sys3(n, a, b, c) moat_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define moat_sys4(n, a, b, c, d) moat_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define moat_sys5(n, a, b, c, d, e)                                                                \
	moat_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

#endif

/* Included last by ns.c: its lookups go through the recorders of fsrec.c
 * (a pass-through unless a record is on). Every call ns.c makes that
 * reads the filesystem by path or opens something must be here, or be
 * marked unrecordable (glob). */
#ifndef MOAT_SANDBOX_FSREC_WRAP_H
#define MOAT_SANDBOX_FSREC_WRAP_H

#include "sandbox/fsrec.h"

#define stat(p, st) moat_fsrec_stat(p, st)
#define lstat(p, st) moat_fsrec_lstat(p, st)
#define access(p, m) moat_fsrec_access(p, m)
#define fstatat(d, n, st, f) moat_fsrec_fstatat(d, n, st, f)
#define open(...) moat_fsrec_open(__VA_ARGS__)
#define openat(...) moat_fsrec_openat(__VA_ARGS__)
#define opendir(p) moat_fsrec_opendir(p)
#define fdopendir(fd) moat_fsrec_fdopendir(fd)
#define realpath(p, o) moat_fsrec_realpath(p, o)
#define readlink(p, b, n) moat_fsrec_readlink(p, b, n)
#define readlinkat(d, p, b, n) moat_fsrec_readlinkat(d, p, b, n)
#define glob(...) (moat_fsrec_unrecordable(), glob(__VA_ARGS__))

#endif

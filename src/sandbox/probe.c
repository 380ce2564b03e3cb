/* Kernel feature probe: what this kernel (and this user) can enforce, asked
 * once per call into a struct moat_kfeatures that the pure planner reads and
 * tests fake.
 *
 * The fast probe (moat run) only reads sysctls and asks Landlock and
 * seccomp; a user namespace that still fails to appear is handled by the
 * caller (re-plan without it, then the fallback policy). The thorough probe
 * (moat status) also creates one. This file must never change anything on
 * the system: probing is read-only. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/str.h"
#include "sandbox/sandbox.h"

static int read_small(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sz - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return (int)n;
}

static long read_long(const char *path, long dflt)
{
	char buf[64];
	long v;

	if (read_small(path, buf, sizeof(buf)) <= 0)
		return dflt;
	buf[strcspn(buf, "\n")] = '\0';
	if (moat_parse_long(buf, -1, 1L << 40, &v) < 0)
		return dflt;
	return v;
}

static void probe_userns_sysctls(struct moat_kfeatures *kf)
{
	const char *fake = secure_getenv("MOAT_FAKE_NO_USERNS");
	long v;

	kf->userns = true;
	if (fake && !strcmp(fake, "1")) {
		kf->userns = false;
		moat_strlcpy(kf->userns_why, "user namespaces disabled by MOAT_FAKE_NO_USERNS=1",
			     sizeof(kf->userns_why));
		return;
	}
	/* the sysctl answers both questions in the common case; only when it
	 * is missing is /proc/self/ns/user asked (a path walk in procfs) */
	v = read_long("/proc/sys/user/max_user_namespaces", -1);
	if (v < 0 && access("/proc/self/ns/user", F_OK) < 0) {
		kf->userns = false;
		moat_strlcpy(kf->userns_why, "kernel built without user namespaces",
			     sizeof(kf->userns_why));
		return;
	}
	if (v == 0) {
		kf->userns = false;
		moat_strlcpy(kf->userns_why, "sysctl user.max_user_namespaces is 0",
			     sizeof(kf->userns_why));
		return;
	}
	if (kf->is_root)
		return; /* the unprivileged-only switches below do not apply */
	if (read_long("/proc/sys/kernel/unprivileged_userns_clone", 1) == 0) {
		kf->userns = false;
		moat_strlcpy(kf->userns_why, "sysctl kernel.unprivileged_userns_clone is 0",
			     sizeof(kf->userns_why));
		return;
	}
	v = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0);
	if (v == 1) {
		/* AppArmor may still allow it through a profile: the clone decides;
		 * the thorough probe tries */
		moat_strlcpy(kf->userns_why,
			     "AppArmor restricts unprivileged user namespaces "
			     "(kernel.apparmor_restrict_unprivileged_userns=1)",
			     sizeof(kf->userns_why));
	}
}

/* CAP_SYS_ADMIN in our own user namespace (root): mount, PID, IPC and
 * network namespaces need no new user namespace. MOAT_FAKE_NO_USERNS=1 and
 * MOAT_FAKE_NO_NS_ADMIN=1 (tests) say no. */
static void probe_ns_admin(struct moat_kfeatures *kf)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	const char *f1 = secure_getenv("MOAT_FAKE_NO_USERNS"), *f2 = secure_getenv("MOAT_FAKE_NO_NS_ADMIN");

	kf->ns_admin = false;
	if ((f1 && !strcmp(f1, "1")) || (f2 && !strcmp(f2, "1")))
		return;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) == 0)
		kf->ns_admin = (d[0].effective >> CAP_SYS_ADMIN) & 1;
}

static void probe_seccomp(struct moat_kfeatures *kf)
{
	uint32_t action = SECCOMP_RET_ERRNO;

	kf->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
		      syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	if (kf->seccomp) {
		action = SECCOMP_RET_LOG;
		kf->seccomp = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	}
}

/* cgroup v2: usable when a directory we may write into already delegates
 * the memory and pids controllers to its children. MOAT_CGROUP_PARENT names
 * one explicitly (for example a systemd-delegated slice); otherwise the
 * cgroup we run in is tried. */
static void probe_cgroup(struct moat_kfeatures *kf)
{
	char rel[512], dir[512], ctl[1024], file[600];
	const char *explicit_dir = secure_getenv("MOAT_CGROUP_PARENT");
	const char *mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified", NULL};

	kf->cgroup = false;
	kf->cgroup_dir[0] = '\0';
	if (explicit_dir && explicit_dir[0] == '/') {
		moat_strlcpy(dir, explicit_dir, sizeof(dir));
	} else {
		int n = read_small("/proc/self/cgroup", ctl, sizeof(ctl));
		char *line = NULL;

		if (n > 0) {
			for (char *l = ctl; l && *l;) {
				char *nl = strchr(l, '\n');

				if (nl)
					*nl = '\0';
				if (!strncmp(l, "0::", 3)) {
					line = l + 3;
					break;
				}
				l = nl ? nl + 1 : NULL;
			}
		}
		if (!line) {
			moat_strlcpy(kf->cgroup_why, "no cgroup v2 hierarchy",
				     sizeof(kf->cgroup_why));
			return;
		}
		moat_strlcpy(rel, line, sizeof(rel));
		dir[0] = '\0';
		for (size_t i = 0; mounts[i]; i++) {
			snprintf(file, sizeof(file), "%s/cgroup.controllers", mounts[i]);
			if (access(file, R_OK) == 0) {
				if ((size_t)snprintf(dir, sizeof(dir), "%s%s", mounts[i],
						     strcmp(rel, "/") ? rel : "") >= sizeof(dir))
					dir[0] = '\0';
				break;
			}
		}
		if (!dir[0]) {
			moat_strlcpy(kf->cgroup_why, "cgroup v2 is not mounted",
				     sizeof(kf->cgroup_why));
			return;
		}
	}
	if ((size_t)snprintf(file, sizeof(file), "%s/cgroup.subtree_control", dir) >= sizeof(file))
		return;
	if (read_small(file, ctl, sizeof(ctl)) < 0 || !strstr(ctl, "memory") ||
	    !strstr(ctl, "pids")) {
		snprintf(kf->cgroup_why, sizeof(kf->cgroup_why),
			 "%.100s does not delegate the memory and pids controllers", dir);
		return;
	}
	if (access(dir, W_OK) < 0) {
		snprintf(kf->cgroup_why, sizeof(kf->cgroup_why), "%.120s is not writable", dir);
		return;
	}
	kf->cgroup = true;
	moat_strlcpy(kf->cgroup_dir, dir, sizeof(kf->cgroup_dir));
	kf->cgroup_why[0] = '\0';
}

/* Can the sandbox mount a fresh procfs? In a user namespace the kernel
 * refuses one unless a procfs is already fully visible in the mount
 * namespace (mount_too_revealing): a procfs mount with no mount on a file
 * or on a non-empty directory under it. Container engines cover
 * /proc/keys, /proc/timer_list, ... (podman, Kubernetes) or bind
 * /proc/sys read-only: no fresh /proc there. Read from mountinfo (one
 * file, no namespace made); the thorough probe tries the mount itself.
 * Root making namespaces without a user namespace, in the initial one, is
 * not asked. MOAT_FAKE_NO_FRESH_PROC=1 (tests) says no, MOAT_FAKE_FRESH_PROC=1
 * yes (moat run then finds out at the mount, and re-plans). */
static bool in_initial_userns(void)
{
	char buf[128], *nl;
	unsigned long a, b, c;

	if (read_small("/proc/self/uid_map", buf, sizeof(buf)) <= 0)
		return false;
	nl = strchr(buf, '\n');
	return sscanf(buf, "%lu %lu %lu", &a, &b, &c) == 3 && a == 0 && b == 0 &&
	       c == 4294967295UL && (!nl || !nl[1]);
}

static void probe_fresh_proc(struct moat_kfeatures *kf)
{
	const char *fake = secure_getenv("MOAT_FAKE_NO_FRESH_PROC");
	/* directories procfs keeps empty for mounts (binfmt_misc) */
	static const char *const empty_dirs[] = {"/proc/sys/fs/binfmt_misc", NULL};
	unsigned long procs[16], id, parent;
	size_t nprocs = 0, nvisible;
	bool visible[16];
	char line[4096], mp[2048], covered[120] = "";
	FILE *f;

	kf->fresh_proc = true;
	kf->fresh_proc_why[0] = '\0';
	if (fake && !strcmp(fake, "1")) {
		kf->fresh_proc = false;
		moat_strlcpy(kf->fresh_proc_why, "disabled by MOAT_FAKE_NO_FRESH_PROC=1",
			     sizeof(kf->fresh_proc_why));
		return;
	}
	/* (tests: a probe misled, for the re-plan when the mount fails) */
	fake = secure_getenv("MOAT_FAKE_FRESH_PROC");
	if ((fake && !strcmp(fake, "1")) || (!kf->userns && in_initial_userns()))
		return;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return; /* the mount decides (and the caller re-plans) */
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");
		char root[16];

		if (sep && !strncmp(sep, " - proc ", 8) && nprocs < 16 &&
		    sscanf(line, "%lu %lu %*s %15s", &id, &parent, root) == 3 && !strcmp(root, "/"))
			procs[nprocs++] = id;
	}
	if (nprocs == 0) {
		fclose(f);
		return;
	}
	for (size_t i = 0; i < nprocs; i++)
		visible[i] = true;
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		bool empty = false;

		if (sscanf(line, "%lu %lu %*s %*s %2047s", &id, &parent, mp) != 3)
			continue;
		for (size_t k = 0; empty_dirs[k]; k++)
			empty = empty || !strcmp(mp, empty_dirs[k]);
		for (size_t i = 0; i < nprocs; i++) {
			if (procs[i] == parent && !empty && visible[i]) {
				visible[i] = false;
				/* name a mask under /proc rather than a procfs
				 * mounted over another */
				if (!covered[0] || !strcmp(covered, "/proc"))
					moat_strlcpy(covered, mp, sizeof(covered));
			}
		}
	}
	fclose(f);
	nvisible = 0;
	for (size_t i = 0; i < nprocs; i++)
		nvisible += visible[i];
	if (nvisible == 0) {
		kf->fresh_proc = false;
		snprintf(kf->fresh_proc_why, sizeof(kf->fresh_proc_why),
			 "the container masks /proc: %.100s is covered", covered);
	}
}

int moat_probe_start(struct moat_kfeatures *kf)
{
	struct utsname u;

	memset(kf, 0, sizeof(*kf));
	kf->is_root = geteuid() == 0;
	if (uname(&u) == 0) {
		char *end;

		kf->kernel_major = (unsigned)strtoul(u.release, &end, 10);
		if (*end == '.')
			kf->kernel_minor = (unsigned)strtoul(end + 1, NULL, 10);
	}
	kf->landlock_abi = moat_landlock_abi(&kf->landlock_errno);
	probe_userns_sysctls(kf);
	probe_ns_admin(kf);
	probe_fresh_proc(kf);
	return 0;
}

int moat_probe_finish(struct moat_kfeatures *kf)
{
	probe_seccomp(kf);
	probe_cgroup(kf);
	/* Linux 6.14 made kernel.pid_max a per-PID-namespace sysctl */
	kf->pidns_pid_max =
	    kf->kernel_major > 6 || (kf->kernel_major == 6 && kf->kernel_minor >= 14);
	return 0;
}

int moat_probe(struct moat_kfeatures *kf)
{
	int r = moat_probe_start(kf);

	return r < 0 ? r : moat_probe_finish(kf);
}

/* The thorough probe's child: what the sandbox's own child will do first
 * in its namespaces (src/sandbox/ns.c): the new mount API, and a fresh
 * procfs over /proc (in its own mount namespace: nothing is changed
 * outside). Exit 0, or what failed and its errno. */
#define PROBE_FAIL_MOUNT_API 1
#define PROBE_FAIL_PROC 2
static void probe_child(bool proc)
{
	int fd = (int)syscall(430 /* fsopen */, "tmpfs", 1u /* FSOPEN_CLOEXEC */);

	if (fd < 0)
		_exit(PROBE_FAIL_MOUNT_API << 6 | (errno & 63));
	close(fd);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(PROBE_FAIL_MOUNT_API << 6 | (errno & 63));
	if (proc && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		_exit(PROBE_FAIL_PROC << 6 | (errno & 63));
	_exit(0);
}

static void no_namespaces(struct moat_kfeatures *kf, const char *what, int e)
{
	bool had_userns = kf->userns;

	kf->userns = false;
	kf->ns_admin = false;
	snprintf(kf->userns_why, sizeof(kf->userns_why), "%s failed: %s%s", what, strerror(e),
		 had_userns && kf->userns_why[0] ? " (AppArmor restricts them)" : "");
}

int moat_probe_thorough(struct moat_kfeatures *kf)
{
	int r = moat_probe(kf);
	unsigned long flags;
	pid_t pid;
	int st, code;

	if (r < 0 || (!kf->userns && !kf->ns_admin))
		return r;
	/* the namespaces moat run's child is cloned with (the network one
	 * included: a seccomp filter may refuse one flag and not another) */
	flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | (kf->userns ? CLONE_NEWUSER : 0) |
		(kf->fresh_proc ? CLONE_NEWPID : 0);
	/* fork-style (the child runs on a copy of this stack) and exits at once */
	pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		probe_child(kf->fresh_proc);
	if (pid < 0) {
		no_namespaces(kf,
			      kf->userns ? "creating a user namespace" : "creating namespaces as root",
			      errno);
		return 0;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (code == 0) {
		kf->userns_why[0] = '\0';
	} else if (code >> 6 == PROBE_FAIL_PROC) {
		/* the fast probe missed it: plan as moat run will (it
		 * re-plans when the mount fails) */
		kf->fresh_proc = false;
		snprintf(kf->fresh_proc_why, sizeof(kf->fresh_proc_why),
			 "mounting a fresh /proc failed: %s", strerror(code & 63));
		kf->userns_why[0] = '\0';
	} else {
		no_namespaces(kf, "the new mount API in a mount namespace",
			      code > 0 ? (code & 63) : EINVAL);
	}
	return 0;
}

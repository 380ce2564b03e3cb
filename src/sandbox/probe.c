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

int moat_probe_thorough(struct moat_kfeatures *kf)
{
	int r = moat_probe(kf);
	pid_t pid;
	int st;

	if (r < 0 || !kf->userns)
		return r;
	/* fork-style (the child runs on a copy of this stack) and exits at once */
	pid = (pid_t)syscall(
	    SYS_clone,
	    (unsigned long)(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | SIGCHLD),
	    NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(0);
	if (pid < 0) {
		kf->userns = false;
		snprintf(kf->userns_why, sizeof(kf->userns_why),
			 "creating a user namespace failed: %s%s", strerror(errno),
			 kf->userns_why[0] ? " (AppArmor restricts them)" : "");
		return 0;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	kf->userns_why[0] = '\0';
	return 0;
}

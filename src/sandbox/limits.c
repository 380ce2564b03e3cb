/* Resource limits: a cgroup v2 leaf where a delegated subtree exists, else
 * rlimits; the plan says which (plan->mem_mech, plan->pids_mech).
 *
 * The rlimit fallback is chosen so that runtimes reserving large address
 * space still start: memory is capped with RLIMIT_DATA (writable private
 * mappings, i.e. memory that can be touched), never RLIMIT_AS (which counts
 * PROT_NONE reservations: the JVM's compressed class space, V8's cage, Go's
 * arenas). Processes: the PID namespace's pid_max (spawn.c) where the kernel
 * has it, RLIMIT_NPROC otherwise; RLIMIT_NPROC counts per user, so inside a
 * fresh user namespace it counts only the sandbox, and without one moat adds
 * the number of processes already running.
 *
 * This file must never raise a limit above what the caller already has. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "base/str.h"
#include "sandbox/sandbox.h"

static int write_at(int dfd, const char *file, const char *s)
{
	int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int r = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		r = -errno;
	close(fd);
	return r;
}

int moat_cgroup_create(const struct moat_plan *p, const struct moat_kfeatures *kf,
		       struct moat_cgroup *cg, struct moat_error *err)
{
	char num[32];
	struct timespec ts;
	int r;

	cg->dir_fd = -1;
	cg->procs_fd = -1;
	cg->path[0] = '\0';
	if (p->mem_mech != MOAT_LIMIT_CGROUP && p->pids_mech != MOAT_LIMIT_CGROUP)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(cg->path, sizeof(cg->path), "%s/moat-%d-%lx", kf->cgroup_dir, (int)getpid(),
		 (unsigned long)ts.tv_nsec);
	if (mkdir(cg->path, 0755) < 0) {
		r = -errno;
		moat_error_set(err, "cannot create the cgroup '%s': %s", cg->path, strerror(-r));
		cg->path[0] = '\0';
		return r;
	}
	cg->dir_fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dir_fd < 0) {
		r = -errno;
		goto fail;
	}
	if (p->mem_mech == MOAT_LIMIT_CGROUP && p->mem_bytes) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)p->mem_bytes);
		r = write_at(cg->dir_fd, "memory.max", num);
		if (r < 0)
			goto fail;
		(void)write_at(cg->dir_fd, "memory.swap.max", "0"); /* absent without swap */
	}
	if (p->pids_mech == MOAT_LIMIT_CGROUP && p->pids) {
		snprintf(num, sizeof(num), "%ld", p->pids);
		r = write_at(cg->dir_fd, "pids.max", num);
		if (r < 0)
			goto fail;
	}
	cg->procs_fd = openat(cg->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (cg->procs_fd < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	moat_error_set(err, "cannot set up the cgroup '%s': %s", cg->path, strerror(-r));
	moat_cgroup_release(cg);
	return r;
}

void moat_cgroup_kill(struct moat_cgroup *cg)
{
	char buf[4096];
	int fd;
	ssize_t n;

	if (cg->dir_fd < 0)
		return;
	if (write_at(cg->dir_fd, "cgroup.kill", "1") == 0)
		return;
	/* before Linux 5.14: kill what is listed (the PID namespace, when
	 * there is one, takes the rest down with its init) */
	fd = openat(cg->dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *s = buf; *s;) {
		long pid;
		char *nl = strchr(s, '\n');

		if (nl)
			*nl = '\0';
		if (moat_parse_long(s, 1, 1L << 30, &pid) == 0)
			kill((pid_t)pid, SIGKILL);
		if (!nl)
			break;
		s = nl + 1;
	}
}

void moat_cgroup_release(struct moat_cgroup *cg)
{
	if (cg->procs_fd >= 0)
		close(cg->procs_fd);
	if (cg->dir_fd >= 0)
		close(cg->dir_fd);
	if (cg->path[0]) {
		/* the last task may still be leaving: retry briefly */
		for (int i = 0; i < 50 && rmdir(cg->path) < 0 && errno == EBUSY; i++) {
			struct timespec ts = {0, 2000000};

			nanosleep(&ts, NULL);
		}
	}
	cg->procs_fd = -1;
	cg->dir_fd = -1;
	cg->path[0] = '\0';
}

static int rl_add(struct moat_rlimits *r, int resource, uint64_t value)
{
	struct rlimit cur;

	if (r->n >= (int)MOAT_ARRAY_SIZE(r->v))
		return -E2BIG;
	if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && value > cur.rlim_max)
		value = cur.rlim_max; /* never above what we were given */
	r->v[r->n].resource = resource;
	r->v[r->n].cur = value;
	r->v[r->n].max = value; /* hard = soft: the command cannot raise it back */
	r->n++;
	return 0;
}

int moat_rlimits_prepare(const struct moat_plan *p, const struct moat_kfeatures *kf,
			 struct moat_rlimits *r, struct moat_error *err)
{
	int e = 0;

	memset(r, 0, sizeof(*r));
	if (p->mem_bytes && p->mem_mech == MOAT_LIMIT_RLIMIT)
		e = rl_add(r, RLIMIT_DATA, p->mem_bytes);
	if (e == 0 && p->pids && !kf->is_root &&
	    (p->pids_mech == MOAT_LIMIT_RLIMIT || p->pids_mech == MOAT_LIMIT_PIDNS)) {
		uint64_t n = (uint64_t)p->pids;

		if (!p->userns) {
			/* counted across all the user's processes: allow the ones
			 * already running (bounded above by the system's total) */
			struct sysinfo si;

			if (sysinfo(&si) == 0)
				n += si.procs;
		}
		e = rl_add(r, RLIMIT_NPROC, n);
	}
	if (e == 0 && p->cpu_s)
		e = rl_add(r, RLIMIT_CPU, (uint64_t)p->cpu_s);
	if (e == 0 && p->fsize_bytes)
		e = rl_add(r, RLIMIT_FSIZE, p->fsize_bytes);
	if (e == 0 && p->nofile)
		e = rl_add(r, RLIMIT_NOFILE, (uint64_t)p->nofile);
	if (e == 0)
		e = rl_add(r, RLIMIT_CORE, 0);
	if (e < 0)
		moat_error_set(err, "too many resource limits");
	return e;
}

int moat_rlimits_apply(const struct moat_rlimits *r, int *ret_failed)
{
	for (int i = 0; i < r->n; i++) {
		struct rlimit l = {(rlim_t)r->v[i].cur, (rlim_t)r->v[i].max};

		if (setrlimit(r->v[i].resource, &l) < 0) {
			*ret_failed = r->v[i].resource;
			return -errno;
		}
	}
	return 0;
}

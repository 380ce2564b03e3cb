/* docker_ns_rules [--enosys] PROGRAM ARGS...: a test helper that installs
 * the namespace rules of Docker's default seccomp profile for a container
 * without CAP_SYS_ADMIN, then execs PROGRAM: unshare, setns, mount,
 * umount2, pivot_root and the new mount API (fsopen, fsmount, fsconfig,
 * fspick, open_tree, move_mount, mount_setattr) refused with EPERM, clone
 * with any CLONE_NEW* flag refused with EPERM, clone3 answered with ENOSYS
 * (so that libc falls back to clone). --enosys answers every refused call
 * with ENOSYS instead, as podman's profile (containers/common, whose
 * default errno is ENOSYS) does. Used by tests/integration/test_docker.sh:
 * the container kinds are reproduced where `make check` runs, without a
 * container engine. */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const refused[] = {
    "unshare", "setns", "mount", "umount2", "pivot_root", "fsopen", "fsmount", "fsconfig",
    "fspick", "open_tree", "move_mount", "mount_setattr", NULL,
};

static const unsigned long newflags[] = {
    CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

int main(int argc, char **argv)
{
	int i = 1, e = EPERM, r = 0;
	scmp_filter_ctx ctx;

	if (i < argc && !strcmp(argv[i], "--enosys")) {
		e = ENOSYS;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: docker_ns_rules [--enosys] PROGRAM ARGS...\n");
		return 2;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		fprintf(stderr, "docker_ns_rules: seccomp_init failed\n");
		return 125;
	}
	for (size_t k = 0; refused[k] && r == 0; k++) {
		int nr = seccomp_syscall_resolve_name(refused[k]);

		if (nr != __NR_SCMP_ERROR)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)e), nr, 0);
	}
	for (size_t k = 0; k < sizeof(newflags) / sizeof(newflags[0]) && r == 0; k++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)e), SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, newflags[k], newflags[k]));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0) {
		fprintf(stderr, "docker_ns_rules: cannot install the filter: %s\n", strerror(-r));
		return 125;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "docker_ns_rules: %s: %s\n", argv[i], strerror(errno));
	return 127;
}

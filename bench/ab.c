/* Interleaved A/B timing of whole commands: each round runs every command
 * once, in an order that rotates from round to round, so that a machine
 * drifting (another VM on the host, CPU frequency) moves all of them alike.
 * hyperfine runs one command after the other for seconds each; on this VM
 * that drift is the size of the differences between two builds of moat.
 *
 *   ab N CMD1 [ARGS...] ::: CMD2 [ARGS...] [::: CMD3 ...]
 *
 * Prints, per command, the median, quartiles and the ratio of its median to
 * the first command's (give the bare command first). stdout and stderr of
 * the commands go to /dev/null; 30 warm-up rounds are not counted. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_CMDS 16
#define WARMUP 30

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	char **cmds[MAX_CMDS];
	int nc = 0, n;
	double *t;
	posix_spawn_file_actions_t fa;

	if (argc < 3 || (n = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: ab N CMD [ARGS...] ::: CMD [ARGS...] ...\n");
		return 2;
	}
	cmds[nc++] = &argv[2];
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], ":::")) {
			argv[i] = NULL;
			if (i + 1 < argc && nc < MAX_CMDS)
				cmds[nc++] = &argv[i + 1];
		}
	t = calloc((size_t)n * (size_t)nc, sizeof(*t));
	if (!t)
		return 1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (int w = 0; w < n + WARMUP; w++) {
		for (int c = 0; c < nc; c++) {
			int k = (w + c) % nc, st;
			double a = now_ms();
			pid_t p;

			if (posix_spawn(&p, cmds[k][0], &fa, NULL, cmds[k], environ)) {
				perror(cmds[k][0]);
				return 1;
			}
			waitpid(p, &st, 0);
			if (w >= WARMUP)
				t[(size_t)k * (size_t)n + (size_t)(w - WARMUP)] = now_ms() - a;
		}
	}
	for (int c = 0; c < nc; c++)
		qsort(t + (size_t)c * (size_t)n, (size_t)n, sizeof(*t), cmp_d);
	for (int c = 0; c < nc; c++) {
		const double *v = t + (size_t)c * (size_t)n;
		const char *name = strrchr(cmds[c][0], '/') ? strrchr(cmds[c][0], '/') + 1 : cmds[c][0];

		printf("%-16s median %.3f ms  p25 %.3f  p75 %.3f  x%.2f\n", name, v[n / 2], v[n / 4],
		       v[(3 * n) / 4], v[n / 2] / t[n / 2]);
	}
	free(t);
	return 0;
}

/* fscrypt_key setpolicy|unlock|lock DIR: a test helper for the encrypted
 * directory tests (tests/integration/test_fscrypt.sh, tests/mcp/
 * armed_fscrypt.mjs). A fixed key, a v2 policy: setpolicy makes DIR (empty)
 * encrypted with the key added, lock removes the key (the names turn into
 * their encoded forms), unlock adds it back (the real names return, with no
 * change of the directory's times and no inotify event). Root only. */
#include <fcntl.h>
#include <linux/fscrypt.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int add_key(int fd, struct fscrypt_add_key_arg *a)
{
	for (int i = 0; i < 64; i++)
		a->raw[i] = (unsigned char)(i * 7 + 3);
	a->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
	a->raw_size = 64;
	if (ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, a) < 0) {
		perror("fscrypt_key: add key");
		return -1;
	}
	return 0;
}

/* the key argument and its 64 raw bytes (no allocation: sanitizer builds
 * run this too) */
static union {
	struct fscrypt_add_key_arg arg;
	unsigned char bytes[sizeof(struct fscrypt_add_key_arg) + 64];
} key;

int main(int argc, char **argv)
{
	struct fscrypt_add_key_arg *a = &key.arg;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: fscrypt_key setpolicy|unlock|lock DIR\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror("fscrypt_key: open");
		return 1;
	}
	if (add_key(fd, a) < 0)
		return 1;
	if (!strcmp(argv[1], "setpolicy")) {
		struct fscrypt_policy_v2 p;

		memset(&p, 0, sizeof(p));
		p.version = FSCRYPT_POLICY_V2;
		p.contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS;
		p.filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS;
		p.flags = FSCRYPT_POLICY_FLAGS_PAD_32;
		memcpy(p.master_key_identifier, a->key_spec.u.identifier,
		       FSCRYPT_KEY_IDENTIFIER_SIZE);
		if (ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &p) < 0) {
			perror("fscrypt_key: set policy");
			return 1;
		}
		return 0;
	}
	if (!strcmp(argv[1], "unlock"))
		return 0;
	if (!strcmp(argv[1], "lock")) {
		struct fscrypt_remove_key_arg r;

		memset(&r, 0, sizeof(r));
		r.key_spec = a->key_spec;
		close(fd);
		sync();
		fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, &r) < 0) {
			perror("fscrypt_key: remove key");
			return 1;
		}
		close(fd);
		/* the names cached while unlocked go with the caches */
		fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "3", 1) != 1)
				perror("fscrypt_key: drop_caches");
			close(fd);
		}
		fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			memset(&r, 0, sizeof(r));
			r.key_spec = a->key_spec;
			(void)ioctl(fd, FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, &r);
		}
		return 0;
	}
	fprintf(stderr, "fscrypt_key: unknown command '%s'\n", argv[1]);
	return 2;
}

/* edr-probe: report, from inside a devroot, what busybox cannot show.
 *
 * The host tests copy this static binary into a root and run it there through
 * enter-devroot, so each check observes the process exactly as the tool left it.
 *
 *   edr-probe nnp     print PR_GET_NO_NEW_PRIVS (0 or 1)
 *   edr-probe fds     print every open fd above 2, one per line
 *   edr-probe cwd     print getcwd()
 *   edr-probe ids     print "ruid euid rgid egid"
 *   edr-probe caps    print the effective capability set in hex
 *   edr-probe escape PATH     try the classic chroot escape (mkdir, chroot,
 *                             chdir ..); print "escaped" when PATH, a host-only
 *                             path, is then visible, else "contained: <why>"
 *   edr-probe escape-fd PATH  for every inherited directory fd: fchdir to it,
 *                             climb, and look for PATH (Jann Horn's objection,
 *                             runc CVE-2024-21626); print "escaped via fd N" or
 *                             "contained"
 *   edr-probe daemon [stubborn] [TOKEN]  start a daemon the way a careless CI job does
 *                             (fork, setsid, fork again) that ignores SIGTERM,
 *                             print "ready" once it runs, then wait for a
 *                             signal (ignoring SIGTERM too with "stubborn");
 *                             both keep "edr-probe daemon" as their command line
 *   edr-probe swap A B SECONDS  the attacker racing a reader of the root: exchange the
 *                             names A and B (renameat2 RENAME_EXCHANGE) in a tight loop
 *                             for SECONDS; print the number of exchanges
 *   edr-probe setxattr PATH NAME VALUE  set an xattr (no symlink followed); print "set"
 *                             or the error (what a process in an overlay root tries
 *                             on its upper: user.overlay.redirect and the like)
 */
#include <errno.h>
#include <sys/xattr.h>
#include <signal.h>
#include <stdlib.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <time.h>

#define MAX_FD_PROBED 65536
#define ESCAPE_DEPTH 64

static int probe_fds(void)
{
	long max = sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > MAX_FD_PROBED)
		max = MAX_FD_PROBED;
	for (int fd = 3; fd < max; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			printf("%d\n", fd);
	return 0;
}

static int probe_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) != 0) {
		perror("capget");
		return 1;
	}
	printf("%08x%08x\n", data[1].effective, data[0].effective);
	return 0;
}

/* The escape every chroot(2) without a new mount namespace is open to when
 * the process keeps CAP_SYS_CHROOT. After it, "/" is the real root iff
 * HOST_ONLY_PATH (given on the command line) exists. */
static int probe_escape(const char *host_only_path)
{
	if (mkdir("edr-escape", 0700) != 0 && errno != EEXIST) {
		printf("contained: mkdir: %s\n", strerror(errno));
		return 0;
	}
	if (chroot("edr-escape") != 0) {
		printf("contained: chroot: %s\n", strerror(errno));
		return 0;
	}
	for (int i = 0; i < ESCAPE_DEPTH; i++)
		if (chdir("..") != 0)
			break;
	if (chroot(".") != 0) {
		printf("contained: chroot(.): %s\n", strerror(errno));
		return 0;
	}
	if (host_only_path && access(host_only_path, F_OK) == 0)
		printf("escaped\n");
	else
		printf("contained: host path not visible\n");
	return 0;
}

static int probe_escape_fd(const char *host_only_path)
{
	struct stat st;

	for (int fd = 3; fd < MAX_FD_PROBED; fd++) {
		if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (fchdir(fd) != 0)
			continue;
		for (int i = 0; i < ESCAPE_DEPTH; i++)
			if (chdir("..") != 0)
				break;
		char rel[PATH_MAX];
		/* host_only_path is absolute; from the real / it is reachable relatively. */
		snprintf(rel, sizeof rel, ".%s", host_only_path);
		if (access(rel, F_OK) == 0) {
			printf("escaped via fd %d\n", fd);
			return 0;
		}
	}
	printf("contained\n");
	return 0;
}

static int probe_daemon(int stubborn)
{
	int ready[2];
	char c;

	if (pipe(ready) != 0)
		return 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		setsid();
		if (fork() != 0)
			_exit(0);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		write(ready[1], "r", 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		return 1;
	if (stubborn)
		signal(SIGTERM, SIG_IGN);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int probe_swap(const char *a, const char *b, const char *seconds)
{
	time_t end = time(NULL) + atoi(seconds);
	unsigned long n = 0;

	while (time(NULL) < end) {
		for (int i = 0; i < 1000; i++, n++)
			if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0) {
				perror("renameat2");
				return 1;
			}
	}
	printf("%lu\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	char buf[PATH_MAX];

	if (argc < 2) {
		fprintf(stderr, "usage: edr-probe nnp|fds|cwd|ids|caps|escape PATH|escape-fd PATH\n");
		return 2;
	}
	if (strcmp(argv[1], "nnp") == 0) {
		printf("%d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
		return 0;
	}
	if (strcmp(argv[1], "fds") == 0)
		return probe_fds();
	if (strcmp(argv[1], "cwd") == 0) {
		if (!getcwd(buf, sizeof buf)) {
			printf("getcwd: %s\n", strerror(errno));
			return 1;
		}
		printf("%s\n", buf);
		return 0;
	}
	if (strcmp(argv[1], "ids") == 0) {
		printf("%u %u %u %u\n", getuid(), geteuid(), getgid(), getegid());
		return 0;
	}
	if (strcmp(argv[1], "caps") == 0)
		return probe_caps();
	if (strcmp(argv[1], "escape") == 0)
		return probe_escape(argc > 2 ? argv[2] : NULL);
	if (strcmp(argv[1], "escape-fd") == 0 && argc > 2)
		return probe_escape_fd(argv[2]);
	if (strcmp(argv[1], "daemon") == 0)
		return probe_daemon(argc > 2 && strcmp(argv[2], "stubborn") == 0);
	if (strcmp(argv[1], "setxattr") == 0 && argc > 4) {
		if (lsetxattr(argv[2], argv[3], argv[4], strlen(argv[4]), 0) < 0) {
			printf("%s\n", strerror(errno));
			return 1;
		}
		printf("set\n");
		return 0;
	}
	if (strcmp(argv[1], "swap") == 0 && argc > 4)
		return probe_swap(argv[2], argv[3], argv[4]);
	fprintf(stderr, "edr-probe: %s: unknown probe\n", argv[1]);
	return 2;
}

/*
 * Copyright (C) 2026 the enter-devroot project
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License as
 * published by the Free Software Foundation, version 2 of the
 * License.
 *
 * Set no_new_privs, then chroot(2) into DIR, or fchroot(2) its
 * descriptor with -f: the unprivileged path of fs.unprivileged_chroot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_fchroot
#define __NR_fchroot 472
#endif

int main(int argc, char *argv[])
{
	const char *dir = argc == 3 ? argv[2] : argv[1];
	int use_fd = argc == 3 && strcmp(argv[1], "-f") == 0;
	int fd, ret;

	if (argc < 2 || argc > 3 || (argc == 3 && !use_fd)) {
		fprintf(stderr, "usage: %s [-f] DIR\n", argv[0]);
		return 1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		printf("FAIL - prctl(PR_SET_NO_NEW_PRIVS): %s\n", strerror(errno));
		return 1;
	}
	if (use_fd) {
		fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			printf("FAIL - open %s: %s\n", dir, strerror(errno));
			return 1;
		}
		ret = syscall(__NR_fchroot, fd, 0);
	} else {
		ret = chroot(dir);
	}
	if (ret) {
		printf("FAIL - %s %s: %s\n", use_fd ? "fchroot" : "chroot", dir,
		       strerror(errno));
		return 1;
	}
	printf("PASS\n");
	return 0;
}

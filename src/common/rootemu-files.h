/* The package-manager settings --root writes into a root (rootemu.c) and export leaves out
 * (export.c), by path inside the root and exact content: a file at one of these paths with
 * any other content is the root's own and is exported as it is.
 *
 *   apt: its download sandbox switches to _apt and then checks that getuid() and friends
 *        changed, and stops ("Could not switch group"); under --root they stay 0, so apt
 *        downloads as "root", as charliecloud's root emulation configures Debian images.
 *   dpkg: it reopens each unpacked file O_WRONLY to fsync it before the rename; a file
 *        shipped without owner write permission (sudo's 0440 sudoers.d/README) refuses
 *        that without root's DAC override. unsafe-io skips the fsync (what Docker's Debian
 *        images set for speed); every file keeps the mode the package gives it.
 * Each is written only where its directory exists (a Debian-family root). */
#pragma once

#include <stddef.h>

struct rootemu_file
{
  const char *path; /* absolute, inside the root */
  const char *content;
};

static const struct rootemu_file rootemu_files[] = {
  { "/etc/apt/apt.conf.d/99enter-devroot-root",
    "// Written by enter-devroot --root, left out by export: under --root the ids stay\n"
    "// yours, so apt's download sandbox cannot switch to _apt and must not try.\n"
    "APT::Sandbox::User \"root\";\n" },
  { "/etc/dpkg/dpkg.cfg.d/enter-devroot-root",
    "# Written by enter-devroot --root, left out by export: without root's DAC override\n"
    "# dpkg cannot reopen a file shipped read-only (mode 0440) to fsync it; skip the fsync.\n"
    "force-unsafe-io\n" },
};

#define ROOTEMU_N_FILES (sizeof rootemu_files / sizeof rootemu_files[0])

/* --root: a seccomp filter under which getuid() and friends report 0 and the privileged
 * calls of package managers (chown, set*id, setgroups, capset, mknod of devices) succeed
 * without effect. Grants nothing: see rootemu.c and SECURITY.md. */
#pragma once

/* Install the filter in the calling process (after no_new_privs and confine_root). Dies
 * (exit 125) when the kernel refuses it. */
void rootemu_install (const char *name);

/* Without --root: when ARGV is a package manager asked to change packages (apt-get
 * install, dpkg -i ...), which it refuses as an ordinary user, one "hint:" line saying
 * that --root is what it needs (the command still runs, and fails with its own error). Prints nothing otherwise. */
void rootemu_hint (const char *name, char *const *argv);

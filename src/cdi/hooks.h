/* `enter-devroot-cdi hooks BUNDLE ROOT PID ID`: the CDI hooks of the devices asked for, run
 * as an OCI runtime runs a container's (runtime-spec config.md, "POSIX-platform Hooks"), for
 * a job whose namespaces are made and whose root is ready but not yet entered: enter-devroot
 * runs this from the job's mount namespace (cdi.h), edits on standard input.
 *
 * BUNDLE is an empty directory of that namespace (a tmpfs enter-devroot mounted): its
 * config.json says the root is ROOT (the path the root has there) and holds the hooks and
 * what the edits mount and set, as the bundle of an OCI runtime would; each hook gets the
 * container's state on its standard input ({"ociVersion", "id": ID, "status", "pid": PID,
 * "bundle": BUNDLE, "root": ROOT}, "root" as crun adds it). So nvidia-cdi-hook's
 * update-ldcache and create-symlinks find the root as they find a runtime's.
 *
 * In order: the prestart, createRuntime and createContainer hooks, their paths the host's
 * (the root is not entered yet); then the startContainer hooks, each chrooted into ROOT
 * first, their paths the root's (the spec says they resolve in the container). Each runs
 * with its own args and env only, standard output on standard error (the job's output is
 * the command's), no fd but 0, 1 and 2, as the user, with the capabilities the job's user
 * namespace gives (what a rootless runtime's hooks have; none on the host), killed after its
 * timeout. A hook that cannot run, fails or times out ends the job: one line naming it and
 * its spec file, and exit 125. */
#pragma once

int hooks_run (const char *bundle, const char *root, const char *pid, const char *id);

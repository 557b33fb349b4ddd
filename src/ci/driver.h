/* What the CI engine drivers (gitlab.c, github-hook.c) share: they are thin callers of the
 * enter-devroot commands a user runs by hand (create, run, remove), never a second
 * implementation of entering. A driver's job is the engine's protocol: its variables or
 * JSON in, those commands out, its exit-status conventions back. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* How a devroot is made from an image a CI job names: append create's source options for
 * IMAGE to *ARGV (a NULL-terminated vector, strings owned). IMAGE is read as the engines
 * read it, a Docker reference ("debian:bookworm", "registry:5000/team/img:tag", Docker Hub
 * where the first component is no host), unless it says otherwise: "template:NAME" is a
 * template (built in or from the catalogue), and anything create --from takes by its
 * prefix (docker://, https://, http://, and the local forms oci:, docker-archive:,
 * file://, a path starting with / or ./) is passed as it is. Returns the docker://
 * reference's registry host in *REGISTRY (owned; NULL for other forms), for credentials.
 *
 * The job's author chooses IMAGE and the runner's user runs the create: a local form
 * would copy that user's files (a directory, an archive) into a root the job can read.
 * Unless LOCAL_OK (the runner's administrator said so), a local form returns false and
 * appends nothing. */
bool ci_image_source (const char *image, bool local_ok, char ***argv, char **registry);

/* Registry credentials for one create: a private auth file naming only REGISTRY, in the
 * format create reads from $REGISTRY_AUTH_FILE. Returns its path (owned), or NULL when
 * USER or PASSWORD is empty. ci_credentials_remove() deletes it and its directory. */
char *ci_credentials_write (const char *registry, const char *user, const char *password);
void ci_credentials_remove (char *path);

/* Run enter-devroot (the binary beside this helper, else the installed one) with ARGS
 * (NULL-terminated, without argv[0]). STDIN_FD: the child's standard input, or -1 for
 * /dev/null; stdout and stderr are ours. EXTRA_ENV: "K=V" strings added to the child's
 * environment, or NULL. SIGINT, SIGTERM and SIGHUP that reach this process while it waits
 * are passed on to the child (engines signal the driver, and not always its group).
 * Returns the child's exit status, 128+N when a signal N ended it. */
int ci_tool (char *const args[], int stdin_fd, char *const extra_env[]);

/* ci_tool with no standard input and its stderr silenced: for probes whose failure is an
 * answer, not an error. */
int ci_tool_quiet (char *const args[]);

/* ci_tool whose command hears from the driver and answers it over its standard input, one
 * end of a socket pair: it reads INPUT (LEN bytes, fed by a child of ours so that a long
 * one never blocks us) and then its end, and what it writes back to its standard input,
 * at most SIZE - 1 bytes, is in REPLY (NUL-terminated) once the tool has exited. QUIET:
 * stderr silenced, as ci_tool_quiet's. How a driver learns what only the inside of a
 * devroot shows, whatever its layout: an overlay root's tree is mounted only in the
 * job's own namespaces, and its directory on the host is an empty mount point. The reply
 * comes from a program of the job's image, so it is the job's word about itself, never
 * a path or a name for the driver to act on. */
int ci_tool_talk (char *const args[], const char *input, size_t len, bool quiet, char *reply,
                  size_t size);

/* `remove --force NAME`: the devroot and whatever still runs in it; its status is not
 * the job's (engines ignore cleanup's), so it is not returned. */
void ci_remove_root (const char *name);

/* The devroot NAME's directory (owned), or NULL when it does not exist. For an overlay
 * root that is its mount point, empty on the host: say whether the root exists, or copy
 * into a flat root (chroot mode), never read its tree. */
char *ci_root_path (const char *name);

/* getenv() for a variable that must be a decimal exit status 0-255, else FALLBACK. */
int ci_status_from_env (const char *variable, int fallback);

/* Append S (copied) to the NULL-terminated vector *V. */
void ci_push (char ***v, const char *s);
__attribute__((format (printf, 2, 3))) void ci_pushf (char ***v, const char *format, ...);
/* Append create's layout for a job's root, entered in MODE (the driver's --mode: auto,
 * userns or chroot): a job's root is a throwaway one that nobody looks at from the host, so
 * an overlay of the image's stored layers (made in O(layers), nothing copied) wherever
 * one mounts and the job may be entered in a user namespace, else flat; nothing when the
 * user says (ENTER_DEVROOT_LAYOUT, the config file's layout), which create then follows;
 * and --keep-layers, as the next job's root is made from the same image. */
void ci_push_layout (char ***v, const char *mode);

/* Append `run NAME --mode=MODE`: the start of every command a driver runs in the job's
 * devroot (its options and the command follow). */
void ci_push_run (char ***v, const char *name, const char *mode);

/* A driver run as root (euid 0) by its engine: the packaged gitlab-runner service runs
 * its custom executor's programs as root, and an Actions runner can be started with sudo.
 * As root a job's devroot is a plain chroot with root's privileges, and the job is root
 * on the host. Unless ALLOWED (the administrator's --allow-root), one line and exit
 * STATUS. */
void ci_refuse_root (int status, const char *driver, bool allowed);

/* One line on stderr, "enter-devroot: <driver>: <message>", then exit STATUS. */
__attribute__((noreturn, format (printf, 3, 4)))
void ci_fail (int status, const char *driver, const char *format, ...);
__attribute__((noreturn, format (printf, 3, 0)))
void ci_vfail (int status, const char *driver, const char *format, va_list ap);

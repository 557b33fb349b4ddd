/* The environment a command gets inside a devroot. */
#pragma once

#include "common/options.h"

/* Debian's user PATH (/etc/profile: .../usr/local/games:/usr/games), with the sbin
 * directories --root's package managers need. */
#define DEFAULT_PATH \
  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/games:/usr/games"

/* Who the command runs as, read from the root's /etc/passwd; NULL fields are left unset. */
struct env_user
{
  const char *home;
  const char *user;
  const char *shell;
  const char *devroot; /* the devroot's name: ENTER_DEVROOT_NAME and debian_chroot */
  const char *prompt;  /* PS1 for enter's shell (shell.h), or NULL */
};

/* Build the environment. By default only the caller's terminal and locale variables (TERM,
 * COLORTERM, LANG, LANGUAGE, LC_*, TZ) pass through: the rest describes the host
 * (LD_PRELOAD, PATH, XDG_* ...) and means nothing, or harm, inside the root. PATH is set to
 * DEFAULT_PATH, then an OCI image's Env (IMAGE_ENV, may be NULL) is applied, then the
 * caller's variables above, HOME, USER, LOGNAME and SHELL from USER, ENTER_DEVROOT_NAME and
 * debian_chroot (which Debian's bash prompt shows, as under schroot) to the devroot's name
 * on top. With clear_env, only PATH. Then --device's variables (device_env), with clear_env
 * too. --env assignments are applied last. The result is a
 * NULL-terminated vector (strv_free). */
char **env_build (char *const *caller_env, const struct env_opts *opts,
                  char *const *image_env, const struct env_user *user);

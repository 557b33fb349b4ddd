/* What the command line asks of entering a root. Both programs parse it (src/common/cli.c);
 * only enter-devroot acts on it (src/enter/). */
#pragma once

#include <stdbool.h>

#include "common/meta.h"

enum enter_mode
{
  ENTER_MODE_AUTO,   /* chroot; on EPERM, the user-namespace fallback */
  ENTER_MODE_CHROOT, /* plain chroot only (root, or the patched kernel) */
  ENTER_MODE_USERNS, /* user namespace, then chroot */
};

/* What create makes of a root (create --flat or --overlay; overlay.h decides the default). */
enum root_layout
{
  ROOT_LAYOUT_DEFAULT, /* not said on the command line */
  ROOT_LAYOUT_FLAT,    /* a directory holding the tree */
  ROOT_LAYOUT_OVERLAY, /* an overlay of the stored layers, mounted where it is entered */
};

struct env_opts
{
  bool clear_env;   /* start from nothing but PATH */
  char **assignments; /* --env K=V, in order; later ones win */
  char **device_env;  /* --device's variables (K=V, src/enter/cdi.h); borrowed */
};

struct enter_opts
{
  enum enter_mode mode;
  const char *workdir;  /* NULL: the user's home inside the root, else "/" */
  bool no_landlock;     /* --no-landlock: no Landlock domain around the devroot */
  bool no_host_dns;     /* --no-host-dns: the root's own resolv.conf and hosts */
  bool root;            /* --root: ids read 0, chown and set*id succeed (rootemu.c) */
  struct env_opts env;
  char **binds;         /* --bind SRC:DST[:ro], in order; NULL-terminated, owned */
  char **devices;       /* --device VENDOR/CLASS=NAME, in order; NULL-terminated, owned */
  unsigned timeout;     /* --timeout SECONDS; 0: none */
  char **argv;          /* NULL: run's image Entrypoint+Cmd (IMAGE_CMD), else the user's
                         * shell from the root's /etc/passwd */
  bool image_cmd;       /* run: with no ARGV, the image's Entrypoint+Cmd; enter: a shell */
  bool entrypoint;      /* run --entrypoint: ARGV are arguments to the image's Entrypoint */
  const struct meta_image *image; /* from an OCI image's config, or NULL */
};

/* Parse a --mode value; -1 when unknown. */
int enter_mode_parse (const char *s, enum enter_mode *out);

/* 0 when KV is a valid --env argument (K non-empty, then '='); else -1 and *why. */
int env_check_assignment (const char *kv, const char **why);

/* Refuse to run setuid or setgid (or with any other secure-exec transition): neither
 * program is ever meant to hold more privilege than its caller. */
void refuse_if_privileged_exec (void);

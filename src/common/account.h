/* The user's account inside a devroot: /etc/passwd and /etc/group of the root. */
#pragma once

#include <sys/types.h>

struct account
{
  char *name;
  char *home;
  char *shell;
};

void account_clear (struct account *acct);

/* Find UID in the passwd-format TEXT. 0 and *out filled, or -1 when absent. Pure, so it is
 * unit-testable; enter reads the root's own /etc/passwd (after chroot, never through NSS:
 * getpwuid would load NSS modules from inside the root). */
int account_parse_passwd (const char *text, uid_t uid, struct account *out);

/* At create time: give the invoking user an entry in the new root's /etc/passwd and
 * /etc/group (name and ids from the host, home /home/NAME, shell /bin/sh) and create that
 * home, unless the root has no /etc/passwd or already has an entry for the uid. So `id`
 * shows a name and `enter` lands in a home. Works relative to ROOTFD without following
 * symlinks; problems are warnings, never fatal. */
void account_ensure_user (int rootfd);

/* The same, first calling BEFORE_WRITE(PATH, DATA) for each path it may write below ROOTFD
 * ("etc/passwd", "etc/group", "home", "home/NAME"): an overlay root's create writes into
 * the upper directory, where this copies up what the layers hold (store/merged.h). */
void account_ensure_user_with (int rootfd, void (*before_write) (const char *path, void *data),
                               void *data);

/* What account_ensure_user adds for the calling user, so that export can leave it out. */
struct account_additions
{
  uid_t uid;
  gid_t gid;
  char *name, *group;
  char *home;        /* "/home/NAME" */
  char *passwd_line; /* the /etc/passwd line, without its newline */
  char *group_line;  /* the /etc/group line, without its newline */
};

void account_additions (struct account_additions *out);
void account_additions_clear (struct account_additions *a);

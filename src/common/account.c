/* The user's account inside a devroot: /etc/passwd and /etc/group of the root. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/account.h"
#include "common/util.h"

#define ACCOUNT_FILE_MAX (16 * 1024 * 1024)
#define PASSWD_FIELDS 7
#define GROUP_FIELDS 4
#define NEW_USER_SHELL "/bin/sh"

void
account_clear (struct account *acct)
{
  char *owned[] = { acct->name, acct->home, acct->shell };
  free_strings (owned, N_ELEMENTS (owned));
  *acct = (struct account) { 0 };
}

/* Split LINE (modified) at ':' into at most N fields; returns how many it found. */
static size_t
split_fields (char *line, char **fields, size_t n)
{
  size_t i = 0;
  fields[i++] = line;
  for (char *p = line; *p != '\0' && i < n; p++)
    if (*p == ':')
      {
        *p = '\0';
        fields[i++] = p + 1;
      }
  return i;
}

static bool
parse_id (const char *s, unsigned long *out)
{
  char *end;
  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  *out = strtoul (s, &end, 10);
  return errno == 0 && *end == '\0';
}

/* Calls FN on each line of TEXT split into N fields; stops when FN returns true. */
static bool
for_each_entry (const char *text, size_t n, bool (*fn) (char **fields, size_t nf, void *data),
                void *data)
{
  cleanup_free char *copy = xstrdup (text);
  char *save = NULL;
  for (char *line = strtok_r (copy, "\n", &save); line != NULL; line = strtok_r (NULL, "\n", &save))
    {
      char *fields[PASSWD_FIELDS];
      size_t nf = split_fields (line, fields, n);
      if (fn (fields, nf, data))
        return true;
    }
  return false;
}

struct uid_query
{
  uid_t uid;
  struct account *out;
};

static bool
match_passwd_uid (char **f, size_t nf, void *data)
{
  struct uid_query *q = data;
  unsigned long id;
  if (nf < PASSWD_FIELDS || !parse_id (f[2], &id) || id != q->uid)
    return false;
  q->out->name = xstrdup (f[0]);
  q->out->home = xstrdup (f[5]);
  q->out->shell = xstrdup (f[6]);
  return true;
}

int
account_parse_passwd (const char *text, uid_t uid, struct account *out)
{
  struct uid_query q = { .uid = uid, .out = out };
  *out = (struct account) { 0 };
  return for_each_entry (text, PASSWD_FIELDS, match_passwd_uid, &q) ? 0 : -1;
}

struct id_or_name_query
{
  unsigned long id;
  const char *name;
  size_t id_field;
  bool id_found, name_found;
};

static bool
match_id_or_name (char **f, size_t nf, void *data)
{
  struct id_or_name_query *q = data;
  unsigned long id;
  if (nf > q->id_field && parse_id (f[q->id_field], &id) && id == q->id)
    q->id_found = true;
  if (strcmp (f[0], q->name) == 0)
    q->name_found = true;
  return false;
}

/* Append LINE to DIR/FILE unless an entry with the id (or, failing that, the name) exists.
 * Returns true when the line was added. The root's FILE is the archive's: it is opened only
 * as a regular file, never through a symlink, and never waited on (a FIFO there, opened
 * O_RDWR as before, would block the read forever, signals included). */
static bool
append_entry (int etcfd, const char *file, size_t id_field, unsigned long id, const char *name,
              const char *line)
{
  struct stat st;
  cleanup_fd int fd = open_regular_at (etcfd, file, O_RDWR | O_APPEND, &st);
  if (fd < 0)
    {
      if (errno != ENOENT)
        warn ("cannot add you to the root's /etc/%s: %s", file,
              errno == EINVAL ? "not a regular file" : strerror (errno));
      return false;
    }
  cleanup_free char *content = read_fd_all (fd, ACCOUNT_FILE_MAX, NULL);
  if (content == NULL)
    {
      warn ("cannot read the root's /etc/%s: %s", file, strerror (errno));
      return false;
    }
  struct id_or_name_query q = { .id = id, .name = name, .id_field = id_field };
  for_each_entry (content, PASSWD_FIELDS, match_id_or_name, &q);
  if (q.id_found)
    return false;
  if (q.name_found)
    {
      warn ("the root's /etc/%s already has an entry named '%s' with another id; not adding "
            "one", file, name);
      return false;
    }
  size_t clen = strlen (content);
  cleanup_free char *add = xasprintf ("%s%s\n", clen > 0 && content[clen - 1] != '\n' ? "\n" : "",
                                      line);
  if (write_all (fd, add, strlen (add)) < 0)
    {
      warn ("cannot add you to the root's /etc/%s: %s", file, strerror (errno));
      return false;
    }
  return true;
}

void
account_additions (struct account_additions *out)
{
  uid_t uid = getuid ();
  gid_t gid = getgid ();
  struct passwd *pw = getpwuid (uid);
  out->name = pw != NULL ? xstrdup (pw->pw_name) : xasprintf ("user%lu", (unsigned long) uid);
  struct group *gr = getgrgid (gid);
  cleanup_free char *group = gr != NULL ? xstrdup (gr->gr_name) : xstrdup (out->name);
  out->uid = uid;
  out->gid = gid;
  out->home = xasprintf ("/home/%s", out->name);
  out->passwd_line = xasprintf ("%s:x:%lu:%lu:%s:%s:%s", out->name, (unsigned long) uid,
                                (unsigned long) gid, out->name, out->home, NEW_USER_SHELL);
  out->group_line = xasprintf ("%s:x:%lu:", group, (unsigned long) gid);
  out->group = steal_pointer (&group);
}

void
account_additions_clear (struct account_additions *a)
{
  char *owned[] = { a->name, a->group, a->home, a->passwd_line, a->group_line };
  free_strings (owned, N_ELEMENTS (owned));
  *a = (struct account_additions) { 0 };
}

void
account_ensure_user_with (int rootfd, void (*before_write) (const char *path, void *data),
                          void *data)
{
  struct account_additions add;
  account_additions (&add);
  cleanup_free char *home = xasprintf ("home/%s", add.name);
  const char *writes[] = { "etc/passwd", "etc/group", "home", home };
  for (size_t i = 0; before_write != NULL && i < N_ELEMENTS (writes); i++)
    before_write (writes[i], data);

  cleanup_fd int etcfd = openat (rootfd, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (etcfd >= 0 && append_entry (etcfd, "passwd", 2, add.uid, add.name, add.passwd_line))
    {
      append_entry (etcfd, "group", 2, add.gid, add.group, add.group_line);
      cleanup_fd int homefd = openat (rootfd, "home",
                                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (homefd < 0 && errno == ENOENT && mkdirat (rootfd, "home", 0755) == 0)
        homefd = openat (rootfd, "home", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (homefd < 0 || (mkdirat (homefd, add.name, 0755) < 0 && errno != EEXIST))
        warn ("cannot create your home %s in the root: %s", add.home, strerror (errno));
    }
  account_additions_clear (&add);
}

void
account_ensure_user (int rootfd)
{
  account_ensure_user_with (rootfd, NULL, NULL);
}

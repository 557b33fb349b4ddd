/* Records of what a create's source resolved to (resolved.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/paths.h"
#include "common/resolved.h"
#include "common/util.h"
#include "common/verbose.h"

#define RESOLVED_DIR_MODE 0700
/* The first line of every key: a record written before the stamped file was named as
 * typed (resolved once, when it was written) has another key, and is never read. */
#define RESOLVED_FORMAT "2"

char *
resolved_key (const struct cli *cli)
{
  const char *limit = getenv ("ENTER_DEVROOT_MAX_ROOT_SIZE");
  if (cli->template_name != NULL || cli->sha256 != NULL || cli->no_verify
      || cli->index != NULL || cli->cacert != NULL || cli->insecure_http || cli->max_size != 0
      || (limit != NULL && limit[0] != '\0'))
    return NULL;
  const char *from = cli->from != NULL ? cli->from : "";
  if (strstr (from, "://") != NULL)
    return NULL; /* a URL or a registry: what it names can change without a file changing */
  char cwd[4096];
  if (getcwd (cwd, sizeof cwd) == NULL)
    return NULL;
  /* Without --from the source is the default template, which this variable may name. */
  const char *template = cli->from == NULL ? getenv ("ENTER_DEVROOT_DEFAULT_TEMPLATE") : NULL;
  return xasprintf (RESOLVED_FORMAT "\n%s\n%s\n%s\n%s", cwd, from,
                    cli->platform != NULL ? cli->platform : "", template != NULL ? template : "");
}

char *
resolved_source_file (const char *path)
{
  if (path[0] == '/')
    return xstrdup (path);
  char cwd[4096];
  if (getcwd (cwd, sizeof cwd) == NULL)
    return NULL;
  return xasprintf ("%s/%s", cwd, path);
}

/* FNV-1a of KEY: the record's file name (the key itself is inside, and compared). */
static char *
record_path (const char *key)
{
  uint64_t h = UINT64_C (14695981039346656037);
  for (const char *c = key; *c != '\0'; c++)
    h = (h ^ (unsigned char) *c) * UINT64_C (1099511628211);
  cleanup_free char *cache = paths_xdg_dir ("XDG_CACHE_HOME", ".cache");
  return xasprintf ("%s/enter-devroot/layers/resolved/%016" PRIx64 ".json", cache, h);
}

char *
resolved_stamp (const char *path)
{
  struct stat st;
  if (path == NULL || stat (path, &st) < 0 || !S_ISREG (st.st_mode))
    return NULL;
  return xasprintf ("%ju:%ju:%jd:%jd.%09ld:%jd.%09ld", (uintmax_t) st.st_dev,
                    (uintmax_t) st.st_ino, (intmax_t) st.st_size, (intmax_t) st.st_mtim.tv_sec,
                    st.st_mtim.tv_nsec, (intmax_t) st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* The record's "name": the stamped file, its stamp and the key, one a line. */
static char *
record_name (const char *key, const char *stamp_path, const char *stamp)
{
  return xasprintf ("%s\n%s\n%s", stamp_path, stamp, key);
}

void
resolved_write (const char *key, const struct meta *m, const char *stamp_path,
                const char *stamp)
{
  cleanup_free char *path = record_path (key);
  cleanup_free char *dir = xstrdup (path);
  *strrchr (dir, '/') = '\0';
  /* R borrows all of M but its name (R is never cleared). */
  struct meta r = *m;
  r.name = record_name (key, stamp_path, stamp);
  r.layout = NULL;
  r.host_copies[META_COPY_RESOLV_CONF] = r.host_copies[META_COPY_HOSTS] = NULL;
  struct strbuf sb = { 0 };
  meta_append_json (&sb, &r, NULL);
  free (r.name);
  strbuf_append_c (&sb, '\n');
  cleanup_free char *text = strbuf_steal (&sb);
  if (mkdir_p (dir, RESOLVED_DIR_MODE) < 0
      || atomic_file_write (AT_FDCWD, path, text, strlen (text), 0600, 0) < 0)
    verbose ("cannot keep what the source resolved to in %s: %s", path, strerror (errno));
}

bool
resolved_read (const char *key, const char *what, struct meta *m)
{
  cleanup_free char *path = record_path (key);
  *m = (struct meta) { 0 };
  char *nl = NULL, *nl2 = NULL;
  if (meta_read (path, m) < 0)
    verbose ("no record of what %s resolved to", what);
  else if (m->name == NULL || (nl = strchr (m->name, '\n')) == NULL
           || (nl2 = strchr (nl + 1, '\n')) == NULL || strcmp (nl2 + 1, key) != 0
           || m->layers == NULL || m->layers[0] == NULL)
    verbose ("the record in %s is not one of what %s resolved to: not used", path, what);
  else
    {
      *nl = *nl2 = '\0';
      /* The file as named when it was recorded, resolved now: a symlink repointed since,
       * or a file replaced or written, is another stamp. */
      cleanup_free char *now = resolved_stamp (m->name);
      if (now != NULL && strcmp (now, nl + 1) == 0)
        {
          free (m->name);
          m->name = NULL;
          return true;
        }
      verbose ("the record of what %s resolved to is not used: %s is not the file it was "
               "made from (%s now, %s then)", what, m->name, now != NULL ? now : "missing",
               nl + 1);
    }
  meta_clear (m);
  return false;
}

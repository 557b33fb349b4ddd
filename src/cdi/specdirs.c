/* The spec directories and the devices of their specs (see specdirs.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi/specdirs.h"
#include "common/paths.h"
#include "common/util.h"
#include "common/verbose.h"

/* The configured directories, each absolute (a relative one would depend on where the job
 * was started). */
static char **
spec_dirs (void)
{
  cleanup_free char *file = NULL;
  cleanup_free char *value = paths_config_value (CDI_SPEC_DIRS_KEY, &file);
  const char *list = value != NULL ? value : CDI_DEFAULT_SPEC_DIRS;
  char **dirs = xcalloc (strlen (list) + 2, sizeof (char *));
  size_t n = 0;
  for (const char *p = list; *p != '\0';)
    {
      size_t len = strcspn (p, ":");
      if (len > 0)
        {
          char *dir = strndup (p, len);
          if (dir == NULL)
            die ("out of memory");
          if (dir[0] != '/')
            die ("%s: %s: '%s' is not an absolute directory", file, CDI_SPEC_DIRS_KEY,
                 str_one_line (dir));
          for (const char *c = dir; *c != '\0'; c++)
            if ((unsigned char) *c < ' ' || *c == 0x7f)
              die ("%s: %s: '%s' holds a control character", file, CDI_SPEC_DIRS_KEY,
                   str_one_line (dir));
          dirs[n++] = dir;
        }
      p += len + (p[len] == ':');
    }
  return dirs;
}

static int
by_name (const struct dirent **a, const struct dirent **b)
{
  return strcmp ((*a)->d_name, (*b)->d_name);
}

static int
is_spec_name (const struct dirent *de)
{
  return str_has_suffix (de->d_name, ".json") || str_has_suffix (de->d_name, ".yaml");
}

/* DIR/NAME read and checked into a new spec_file; NULL for a directory (skipped, as the Go
 * library skips them). The file may be a symlink: a spec directory is the administrator's,
 * and /etc/cdi/x.yaml -> /var/run/cdi/x.yaml is theirs to make; what it leads to must be a
 * regular file of at most CDI_SPEC_MAX_BYTES, opened without blocking (a FIFO never waits). */
static struct spec_file *
read_spec (int dirfd, const char *dir, const char *name, int priority)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, name);
  cleanup_fd int fd = openat (dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  if (fd < 0 && errno == EISDIR)
    return NULL;
  if (fd < 0 || fstat (fd, &st) < 0)
    die_with_error ("CDI spec %s: cannot read it", str_one_line (path));
  if (S_ISDIR (st.st_mode))
    return NULL;
  if (!S_ISREG (st.st_mode))
    die ("CDI spec %s: not a regular file", str_one_line (path));
  if ((uint64_t) st.st_size > CDI_SPEC_MAX_BYTES)
    die ("CDI spec %s: larger than %u bytes", str_one_line (path), CDI_SPEC_MAX_BYTES);
  size_t len;
  cleanup_free char *text = read_fd_all (fd, CDI_SPEC_MAX_BYTES, &len);
  if (text == NULL && errno == EFBIG)
    die ("CDI spec %s: larger than %u bytes", str_one_line (path), CDI_SPEC_MAX_BYTES);
  if (text == NULL)
    die_with_error ("CDI spec %s: cannot read it", str_one_line (path));
  struct spec_file *f = xcalloc (1, sizeof *f);
  cleanup_free char *error = NULL;
  if (cdi_spec_parse (text, len, str_has_suffix (name, ".yaml"), &f->spec, &error) < 0)
    die ("CDI spec %s: %s", str_one_line (path), error);
  f->path = steal_pointer (&path);
  f->priority = priority;
  verbose ("CDI spec %s: kind %s/%s, %zu devices", f->path, f->spec.vendor, f->spec.class,
           f->spec.n_devices);
  return f;
}

static void
read_dir (struct spec_set *set, const char *dir, int priority)
{
  cleanup_fd int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0 && errno == ENOENT)
    {
      verbose ("CDI spec directory %s: absent", dir);
      return;
    }
  struct dirent **names = NULL;
  int n = dirfd < 0 ? -1 : scandirat (dirfd, ".", &names, is_spec_name, by_name);
  if (n < 0)
    die_with_error ("CDI spec directory %s: cannot read it", dir);
  if (n > CDI_SPEC_FILES_MAX)
    die ("CDI spec directory %s: more than %d spec files", dir, CDI_SPEC_FILES_MAX);
  for (int i = 0; i < n; i++)
    {
      struct spec_file *f = read_spec (dirfd, dir, names[i]->d_name, priority);
      free (names[i]);
      if (f == NULL)
        continue;
      set->files = xrealloc (set->files, (set->n_files + 1) * sizeof *set->files);
      set->files[set->n_files++] = f;
    }
  free (names);
}

static struct device_entry *
find_entry (const struct spec_set *set, const char *qualified)
{
  for (size_t i = 0; i < set->n_devices; i++)
    if (strcmp (set->devices[i].qualified, qualified) == 0)
      return &set->devices[i];
  return NULL;
}

/* Every device of F into the table: a higher priority replaces, the same conflicts. */
static void
add_devices (struct spec_set *set, struct spec_file *f)
{
  for (size_t i = 0; i < f->spec.n_devices; i++)
    {
      struct cdi_spec_device *d = &f->spec.devices[i];
      cleanup_free char *q = xasprintf ("%s/%s=%s", f->spec.vendor, f->spec.class, d->name);
      struct device_entry *e = find_entry (set, q);
      if (e != NULL && e->file->priority == f->priority)
        {
          if (e->conflict == NULL)
            e->conflict = f;
          continue;
        }
      if (e == NULL)
        {
          set->devices = xrealloc (set->devices, (set->n_devices + 1) * sizeof *set->devices);
          e = &set->devices[set->n_devices++];
          e->qualified = steal_pointer (&q);
        }
      e->file = f;
      e->device = d;
      e->conflict = NULL;
    }
}

void
spec_set_load (struct spec_set *set)
{
  *set = (struct spec_set) { .dirs = spec_dirs () };
  for (int p = 0; set->dirs[p] != NULL; p++)
    read_dir (set, set->dirs[p], p);
  for (size_t i = 0; i < set->n_files; i++)
    add_devices (set, set->files[i]);
}

void
spec_set_clear (struct spec_set *set)
{
  for (size_t i = 0; i < set->n_files; i++)
    {
      cdi_spec_clear (&set->files[i]->spec);
      free (set->files[i]->path);
      free (set->files[i]);
    }
  free (set->files);
  for (size_t i = 0; i < set->n_devices; i++)
    free (set->devices[i].qualified);
  free (set->devices);
  strv_free (set->dirs);
  *set = (struct spec_set) { 0 };
}

const struct device_entry *
spec_set_find (const struct spec_set *set, const char *qualified)
{
  return find_entry (set, qualified);
}

char *
spec_set_dirs_text (const struct spec_set *set)
{
  struct strbuf b = { 0 };
  strbuf_append (&b, "");
  for (size_t i = 0; set->dirs[i] != NULL; i++)
    strbuf_appendf (&b, "%s%s", i > 0 ? ", " : "", set->dirs[i]);
  return strbuf_steal (&b);
}

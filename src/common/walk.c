/* A tree walk that a process changing the tree cannot redirect (see walk.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "common/walk.h"

/* Whether what was opened is what was listed. */
static bool
same_inode (const struct stat *listed, const struct stat *opened)
{
  return (listed->st_mode & S_IFMT) == (opened->st_mode & S_IFMT)
         && listed->st_dev == opened->st_dev && listed->st_ino == opened->st_ino;
}

/* ---- hard links: the first path of each (dev, inode) with st_nlink > 1; an
 * open-addressing table, grown at half full */

struct link_slot
{
  dev_t dev;
  ino_t ino;
  char *path; /* NULL: free */
};

struct links
{
  struct link_slot *slots;
  size_t cap, used;
};

static size_t
link_hash (dev_t dev, ino_t ino, size_t cap)
{
  uint64_t h = (uint64_t) ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t) dev;
  return (size_t) (h ^ (h >> 29)) & (cap - 1);
}

static struct link_slot *
link_find (struct links *l, dev_t dev, ino_t ino)
{
  size_t i = link_hash (dev, ino, l->cap);
  while (l->slots[i].path != NULL && (l->slots[i].dev != dev || l->slots[i].ino != ino))
    i = (i + 1) & (l->cap - 1);
  return &l->slots[i];
}

/* The first path of (DEV, INO), or NULL after recording PATH as its first. */
static const char *
link_first (struct links *l, dev_t dev, ino_t ino, const char *path)
{
  if (2 * (l->used + 1) > l->cap)
    {
      struct links bigger = { .cap = l->cap ? 2 * l->cap : 1024 };
      bigger.slots = xcalloc (bigger.cap, sizeof *bigger.slots);
      for (size_t i = 0; i < l->cap; i++)
        if (l->slots[i].path != NULL)
          *link_find (&bigger, l->slots[i].dev, l->slots[i].ino) = l->slots[i];
      free (l->slots);
      bigger.used = l->used;
      *l = bigger;
    }
  struct link_slot *s = link_find (l, dev, ino);
  if (s->path != NULL)
    return s->path;
  *s = (struct link_slot) { .dev = dev, .ino = ino, .path = xstrdup (path) };
  l->used++;
  return NULL;
}

static void
links_clear (struct links *l)
{
  for (size_t i = 0; i < l->cap; i++)
    free (l->slots[i].path);
  free (l->slots);
  *l = (struct links) { 0 };
}

/* ---- the walk */

/* One directory being walked: its own entry (for leave()) and the names left in it. */
struct frame
{
  struct walk_entry e; /* e.fd: the directory, owned unless it is the root */
  char *path, *name;   /* e.path and e.name point here */
  char **names;
  size_t next;
};

struct walker
{
  const char *what;
  struct links links;
  char target[PATH_MAX];
};

__attribute__((noreturn)) static void
changed (struct walker *w, const char *path)
{
  die ("%s: /%s changed while being read: stop what runs in the root, then retry", w->what,
       path);
}

/* Whether ERRNO after an open or readlink of a listed name means the name changed. */
static bool
errno_means_changed (void)
{
  return errno == ENOENT || errno == ELOOP || errno == ENOTDIR || errno == EISDIR
         || errno == ENXIO || errno == EINVAL || errno == EXDEV;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The names in directory DIRFD except . and .., sorted bytewise (a fresh open of ".",
 * so the caller's fd keeps its offset). */
static char **
sorted_names (struct walker *w, int dirfd, const char *path)
{
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    die_with_error ("%s: cannot read directory /%s", w->what, path);
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  errno = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (n + 1 >= cap)
        {
          cap = cap ? 2 * cap : 32;
          names = xrealloc (names, cap * sizeof *names);
        }
      names[n++] = xstrdup (de->d_name);
      errno = 0;
    }
  if (errno != 0)
    die_with_error ("%s: cannot read directory /%s", w->what, path);
  closedir (d);
  if (names == NULL)
    names = xcalloc (1, sizeof *names);
  names[n] = NULL;
  qsort (names, n, sizeof *names, compare_names);
  return names;
}

/* Fill E for NAME in DIRFD as listed now: stat it, open a regular file or directory
 * and check it is what was listed, read a symlink. */
static void
examine (struct walker *w, struct walk_entry *e)
{
  if (fstatat (e->dirfd, e->name, &e->st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT)
        changed (w, e->path);
      die_with_error ("%s: cannot stat /%s", w->what, e->path);
    }
  e->fd = -1;
  e->target = NULL;
  e->first_link = NULL;
  if (S_ISREG (e->st.st_mode) || S_ISDIR (e->st.st_mode))
    {
      /* O_NONBLOCK: a FIFO swapped in opens at once (and is then refused), never waits
       * for a writer. */
      int flags = S_ISDIR (e->st.st_mode) ? O_RDONLY | O_DIRECTORY
                                          : O_RDONLY | O_NONBLOCK | O_NOCTTY;
      e->fd = open_beneath (e->dirfd, e->name, flags);
      if (e->fd < 0 && errno_means_changed ())
        changed (w, e->path);
      if (e->fd < 0)
        die_with_error ("%s: cannot open /%s", w->what, e->path);
      struct stat opened;
      if (fstat (e->fd, &opened) < 0)
        die_with_error ("%s: cannot stat /%s", w->what, e->path);
      if (!same_inode (&e->st, &opened))
        changed (w, e->path);
      e->st = opened; /* the size and times of what will be read */
      if (S_ISREG (e->st.st_mode) && e->st.st_nlink > 1)
        e->first_link = link_first (&w->links, e->st.st_dev, e->st.st_ino, e->path);
    }
  else if (S_ISLNK (e->st.st_mode))
    {
      ssize_t n = readlinkat (e->dirfd, e->name, w->target, sizeof w->target - 1);
      if (n < 0 && errno_means_changed ())
        changed (w, e->path);
      if (n < 0)
        die_with_error ("%s: cannot read the symlink /%s", w->what, e->path);
      w->target[n] = '\0';
      e->target = w->target;
    }
}

static void
frame_push (struct walker *w, struct frame **stack, size_t *depth, size_t *cap,
            const struct walk_entry *e)
{
  if (*depth == *cap)
    {
      *cap = *cap ? 2 * *cap : 16;
      *stack = xrealloc (*stack, *cap * sizeof **stack);
    }
  struct frame *f = &(*stack)[(*depth)++];
  *f = (struct frame) { .e = *e, .path = xstrdup (e->path), .name = xstrdup (e->name) };
  f->e.path = f->path;
  f->e.name = f->name;
  f->e.target = NULL;
  f->names = sorted_names (w, e->fd, e->path);
}

void
walk_tree (int rootfd, const char *what, const struct walk_ops *ops, void *data)
{
  struct walker w = { .what = what };
  struct walk_entry root = { .path = "", .dirfd = rootfd, .name = ".", .fd = rootfd };
  if (fstat (rootfd, &root.st) < 0)
    die_with_error ("%s: cannot stat the root", what);
  if (!S_ISDIR (root.st.st_mode))
    die ("%s: not a directory", what);

  struct frame *stack = NULL;
  size_t depth = 0, cap = 0;
  if (ops->entry (&root, data) == WALK_DESCEND)
    frame_push (&w, &stack, &depth, &cap, &root);
  while (depth > 0)
    {
      struct frame *f = &stack[depth - 1];
      const char *name = f->names[f->next];
      if (name == NULL)
        {
          if (ops->leave != NULL)
            ops->leave (&f->e, data);
          if (f->e.fd != rootfd)
            close (f->e.fd);
          free (f->path);
          free (f->name);
          strv_free (f->names);
          depth--;
          continue;
        }
      f->next++;
      cleanup_free char *path = f->path[0] != '\0' ? xasprintf ("%s/%s", f->path, name)
                                                    : xstrdup (name);
      struct walk_entry e = {
        .path = path, .dirfd = f->e.fd, .name = name, .depth = f->e.depth + 1,
      };
      examine (&w, &e);
      /* Before the callback sees it: callers keep a slot per level of directory
       * (layer-diff.c), sized WALK_MAX_DEPTH + 1. */
      if (S_ISDIR (e.st.st_mode) && e.depth > WALK_MAX_DEPTH)
        die ("%s: /%s is more than %d directories deep: not supported", what, path,
             WALK_MAX_DEPTH);
      enum walk_step step = ops->entry (&e, data);
      if (S_ISDIR (e.st.st_mode) && step == WALK_DESCEND)
        frame_push (&w, &stack, &depth, &cap, &e); /* takes e.fd */
      else if (e.fd >= 0)
        close (e.fd);
    }
  free (stack);
  links_clear (&w.links);
}

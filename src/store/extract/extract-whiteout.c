/* OCI image-layer whiteouts (image-spec layer.md): ".wh.NAME" and ".wh..wh..opq" remove
 * what the lower layers left; the rules are at the top of extract.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/roots.h"
#include "common/util.h"
#include "store/extract/extract-internal.h"
#include "common/walk.h"

/* Remove REL (LEAF in DFD), a file or a whole tree a lower layer left: the walk cache may
 * hold a directory inside it, and the directory fixups under it no longer apply. */
int
remove_lower (struct extractor *x, const char *entry, int dfd, const char *leaf, const char *rel)
{
  if (x->cache.fd >= 0)
    close (x->cache.fd);
  free (x->cache.path);
  x->cache = (struct dir_cache) { .path = NULL, .fd = -1 };
  if (rm_rf_at (dfd, leaf) < 0)
    return refuse (x, entry, "cannot remove '%s': %s", rel, strerror (errno));
  size_t len = strlen (rel);
  for (size_t i = 0; i < x->n_fixups; i++)
    if (strncmp (x->fixups[i].path, rel, len) == 0
        && (x->fixups[i].path[len] == '\0' || x->fixups[i].path[len] == '/'))
      x->fixups[i].removed = true;
  return 0;
}

/* The names in directory DFD (REL) but "." and "..", NULL-terminated (caller frees). */
static char **
list_names (struct extractor *x, const char *entry, int dfd, const char *rel)
{
  DIR *d = opendir_dup (dfd);
  if (d == NULL)
    {
      refuse (x, entry, "cannot read directory '%s': %s", rel, strerror (errno));
      return NULL;
    }
  char **names = xcalloc (1, sizeof *names);
  size_t n = 0;
  struct dirent *de;
  while ((errno = 0, de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        names = xrealloc (names, (n + 2) * sizeof *names);
        names[n++] = xstrdup (de->d_name);
        names[n] = NULL;
      }
  int errsv = errno;
  closedir (d);
  if (errsv != 0)
    {
      strv_free (names);
      refuse (x, entry, "cannot read directory '%s': %s", rel, strerror (errsv));
      return NULL;
    }
  return names;
}

/* Opaque directory DFD (REL): remove every entry no file of the current layer created,
 * and recurse into the directories it did create, which may hold lower-layer entries. */
static int
clear_opaque (struct extractor *x, const char *entry, int dfd, const char *rel)
{
  /* The names first: removing while reading a directory may skip entries. */
  cleanup_strv char **names = list_names (x, entry, dfd, rel);
  if (names == NULL)
    return -1;
  for (size_t i = 0; names[i] != NULL; i++)
    {
      cleanup_free char *child = rel[0] != '\0' ? xasprintf ("%s/%s", rel, names[i])
                                                 : xstrdup (names[i]);
      if (!path_set_has (&x->upper, child))
        {
          if (remove_lower (x, entry, dfd, names[i], child) < 0)
            return -1;
          continue;
        }
      cleanup_fd int sub = openat (dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                                                  | O_CLOEXEC);
      if (sub >= 0 && clear_opaque (x, entry, sub, child) < 0)
        return -1;
    }
  return 0;
}

/* A whiteout entry ENTRY (REL, whose last component starts with ".wh."): apply it to what
 * the lower layers left (see the top of extract.c for the rules). */
int
apply_whiteout (struct extractor *x, const char *entry, const char *rel)
{
  cleanup_free char *copy = NULL;
  const char *leaf, *bad = NULL;
  cleanup_fd int dfd = open_parent (x->rootfd, NULL, rel, false, &copy, &leaf, &bad);
  if (dfd < 0 && errno == ENOENT)
    return 0; /* no such directory: nothing to remove */
  if (dfd < 0 && (errno == ELOOP || errno == ENOTDIR))
    return refuse (x, entry, "whiteout through '%s', which is a symlink or not a directory", bad);
  if (dfd < 0)
    return refuse (x, entry, "cannot open directory '%s': %s", bad, strerror (errno));
  size_t parent_len = (size_t) (leaf - copy);
  cleanup_free char *parent = xasprintf ("%.*s", parent_len > 0 ? (int) parent_len - 1 : 0,
                                         copy);
  if (strcmp (leaf, WHITEOUT_OPAQUE) == 0)
    return clear_opaque (x, entry, dfd, parent);
  if (str_has_prefix (leaf, WHITEOUT_META_PREFIX))
    return refuse (x, entry, "unsupported whiteout type (aufs metadata)");
  const char *victim = leaf + strlen (WHITEOUT_PREFIX);
  if (victim[0] == '\0' || strcmp (victim, ".") == 0 || strcmp (victim, "..") == 0)
    return refuse (x, entry, "whiteout of '%s'", victim[0] == '\0' ? "nothing" : victim);
  cleanup_free char *target = parent[0] != '\0' ? xasprintf ("%s/%s", parent, victim)
                                                : xstrdup (victim);
  struct stat st;
  if (path_set_has (&x->upper, target) || fstatat (dfd, victim, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return 0; /* created by this layer (kept), or nothing there */
  return remove_lower (x, entry, dfd, victim, target);
}

/* 1 when REL's last component is a whiteout, else 0; -1 (refused) for one in the middle of
 * the path (a whiteout is a marker, never a directory holding entries). */
int
is_whiteout (struct extractor *x, const char *entry, const char *rel)
{
  for (const char *p = rel;; p++)
    {
      const char *slash = strchr (p, '/');
      if (!str_has_prefix (p, WHITEOUT_PREFIX))
        ; /* not this component */
      else if (slash == NULL)
        return 1;
      else
        return refuse (x, entry, "a path through a whiteout name");
      if (slash == NULL)
        return 0;
      p = slash;
    }
}

/* This layer's own from now on: REL and its parents (an opaque whiteout must keep a
 * directory this layer wrote into). */
void
mark_upper (struct extractor *x, char *rel)
{
  for (char *slash = strchr (rel, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      path_set_add (&x->upper, rel);
      *slash = '/';
    }
  path_set_add (&x->upper, rel);
}

/* Overlay form: the first prefix of PARENT (a directory path in the root) that the layers
 * below left as a symlink or a non-directory, where this layer made no directory of that
 * name (malloc'd), or NULL. Their trees are the store's own: a walk refusing symlinks. */
static char *
lower_non_directory (struct extractor *x, const char *parent)
{
  if (x->opts->lowers == NULL || parent[0] == '\0')
    return NULL;
  cleanup_free char *p = xstrdup (parent);
  for (char *slash = p;;)
    {
      slash = strchr (slash, '/');
      if (slash != NULL)
        *slash = '\0';
      if (!path_set_has (&x->upper, p))
        for (char *const *l = x->opts->lowers; *l != NULL; l++)
          {
            cleanup_fd int tree = open (*l, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            cleanup_fd int fd = tree < 0 ? -1 : open_beneath (tree, p, O_PATH);
            struct stat st;
            if (fd < 0 || fstat (fd, &st) < 0)
              continue;
            if (S_ISDIR (st.st_mode) || (S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0)))
              break; /* a directory; or whited out there, so nothing below counts */
            return xstrdup (p);
          }
      if (slash == NULL)
        return NULL;
      *slash++ = '/';
    }
}

int
keep_whiteout (struct extractor *x, const char *entry, const char *rel)
{
  /* As when whiteouts are applied: one through a lower layer's symlink is refused (an
   * overlay would only hide it, but the image is broken or hostile: umoci
   * CVE-2021-29136). */
  const char *last = strrchr (rel, '/');
  cleanup_free char *parent = last != NULL ? xasprintf ("%.*s", (int) (last - rel), rel)
                                           : xstrdup ("");
  cleanup_free char *bad = lower_non_directory (x, parent);
  if (bad != NULL)
    return refuse (x, entry, "whiteout through '%s', which is a symlink or not a directory",
                   bad);
  cleanup_free char *copy = NULL;
  const char *leaf;
  cleanup_fd int dfd = open_parent_or_refuse (x, entry, rel, true, &copy, &leaf);
  if (dfd < 0)
    return -1;
  if (strcmp (leaf, WHITEOUT_OPAQUE) == 0)
    {
      if (fsetxattr (dfd, XATTR_OPAQUE, "y", 1, 0) < 0)
        return refuse (x, entry, "cannot mark the directory opaque (%s): %s", XATTR_OPAQUE,
                       strerror (errno));
      return 0;
    }
  if (str_has_prefix (leaf, WHITEOUT_META_PREFIX))
    return refuse (x, entry, "unsupported whiteout type (aufs metadata)");
  const char *victim = leaf + strlen (WHITEOUT_PREFIX);
  if (victim[0] == '\0' || strcmp (victim, ".") == 0 || strcmp (victim, "..") == 0)
    return refuse (x, entry, "whiteout of '%s'", victim[0] == '\0' ? "nothing" : victim);
  struct stat st;
  if (fstatat (dfd, victim, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return 0; /* this layer's own entry, or the same whiteout twice */
  if (mknodat (dfd, victim, S_IFCHR | 0, makedev (0, 0)) < 0)
    return refuse (x, entry, "cannot make the whiteout '%s' (a 0/0 character device): %s",
                   victim, strerror (errno));
  return 0;
}

/* Overlay roots: mounting one, in the entering job's namespaces or the store's own
 * (overlay.h).
 *
 * The mount is unprivileged overlayfs with `userxattr` (5.11+): overlayfs reads its
 * metadata from user.overlay.* xattrs, which the layer store sets only as
 * user.overlay.opaque on an OCI opaque directory (an archive carrying any overlay xattr is
 * refused). The upper directory is written by whatever runs inside the root; overlayfs
 * hides user.overlay.* from the merged tree and refuses to set it (EOPNOTSUPP), and the
 * two xattrs that would make it follow a path of the upper's choosing are switched off
 * explicitly: redirect_dir=nofollow (a user.overlay.redirect is never followed) and
 * metacopy=off (a user.overlay.metacopy file is never taken for a lower file's metadata).
 * userxattr implies both on the kernels we know; saying so keeps it true on any other.
 * index=off: no inode index (its file handles are for trusted.* overlays). See SECURITY.md.
 *
 * Writable overlays sync their upper filesystem, all of it, when they are unmounted (the
 * job's namespaces going): on a busy home that is the cost of a run. A throwaway root's
 * (run --ephemeral, create's own mount, the probe) is mounted `volatile` instead: no sync,
 * as nothing of it must survive a crash; a kept root's writes are synced as on the host.
 *
 * Lower layers are given top first. A mount(2) option string is one page, enough for some
 * 40 layers under a typical home; fsconfig's "lowerdir+" (6.8+) takes one layer per call,
 * up to overlayfs's own limit: it is tried first. */
#include <errno.h>
#include <linux/magic.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/overlay.h"
#include "common/roots.h"
#include "common/userns.h"
#include "common/util.h"
#include "common/verbose.h"

#define DIFF_ID_PREFIX "sha256:"
#define DIFF_ID_HEX_LEN 64
/* What the kernel copies of a mount(2) option string: one page. */
#define MOUNT_DATA_MAX 4096
#define OVERLAY_DIR_MODE 0700

/* The options besides the directories; see above for each. */
static const char *const fixed_flags[] = { "userxattr" };
static const char *const fixed_strings[][2] = {
  { "redirect_dir", "nofollow" }, { "metacopy", "off" }, { "index", "off" },
};

/* VALUE as a layout, or die naming SOURCE. */
static enum root_layout
layout_parse (const char *value, const char *source)
{
  if (strcmp (value, "flat") == 0)
    return ROOT_LAYOUT_FLAT;
  if (strcmp (value, "overlay") == 0)
    return ROOT_LAYOUT_OVERLAY;
  die ("invalid %s '%s': expected flat or overlay", source, value);
}

bool
overlay_layout_wanted (const struct store_paths *p, enum root_layout asked, const char *name)
{
  enum root_layout l = asked;
  const char *why = asked == ROOT_LAYOUT_OVERLAY ? "--overlay" : "--flat";
  const char *env = getenv ("ENTER_DEVROOT_LAYOUT");
  if (l == ROOT_LAYOUT_DEFAULT && env != NULL && env[0] != '\0')
    {
      l = layout_parse (env, "ENTER_DEVROOT_LAYOUT");
      why = "ENTER_DEVROOT_LAYOUT";
    }
  if (l == ROOT_LAYOUT_DEFAULT)
    {
      cleanup_free char *file = NULL;
      cleanup_free char *v = paths_config_value ("layout", &file);
      cleanup_free char *source = xasprintf ("%s: layout =", file);
      l = v != NULL ? layout_parse (v, source) : ROOT_LAYOUT_FLAT;
      why = v != NULL ? "the config file's layout" : "the default";
    }
  verbose ("create: a %s root (%s)", l == ROOT_LAYOUT_OVERLAY ? "overlay" : "flat", why);
  if (l != ROOT_LAYOUT_OVERLAY)
    return false;
  if (!overlay_probe_cached (p))
    die ("cannot create '%s' as an overlay root (%s): this kernel refuses an unprivileged "
         "overlayfs mount (see 'enter-devroot doctor'); create it with --flat", name, why);
  return true;
}

bool
overlay_is_root (const struct meta *m)
{
  return m->layout != NULL && strcmp (m->layout, "overlay") == 0;
}

char *
overlay_layer_tree (const char *diff_id)
{
  if (diff_id == NULL || !str_has_prefix (diff_id, DIFF_ID_PREFIX))
    return NULL;
  const char *hex = diff_id + strlen (DIFF_ID_PREFIX);
  if (strlen (hex) != DIFF_ID_HEX_LEN || strspn (hex, "0123456789abcdef") != DIFF_ID_HEX_LEN)
    return NULL;
  cleanup_free char *cache = paths_xdg_dir ("XDG_CACHE_HOME", ".cache");
  return xasprintf ("%s/enter-devroot/layers/sha256/%s/tree", cache, hex);
}

uint64_t
overlay_layer_size (const char *diff_id)
{
  cleanup_free char *tree = overlay_layer_tree (diff_id);
  if (tree == NULL)
    return 0;
  *strrchr (tree, '/') = '\0'; /* the layer's directory */
  cleanup_free char *path = xasprintf ("%s/meta.json", tree);
  struct meta m = { 0 };
  uint64_t size = meta_read (path, &m) == 0 ? m.size_bytes : 0;
  meta_clear (&m);
  return size;
}

int
overlay_layer_hold (const char *diff_id)
{
  cleanup_free char *tree = overlay_layer_tree (diff_id);
  if (tree == NULL)
    return -1;
  *strrchr (tree, '/') = '\0'; /* the layer's directory, which `cache clean` locks */
  int fd = open (tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st;
  /* A clean removing it holds the lock exclusively: wait for it, then see whether the
   * directory is still there (an rmdir()ed one has no links) and whole (its meta.json is
   * written before it is renamed into place). */
  if (flock (fd, LOCK_SH) < 0 || fstat (fd, &st) < 0 || st.st_nlink == 0
      || faccessat (fd, "meta.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* The directories of one mount: LOWERS top first. */
struct overlay_dirs
{
  char **lowers;
  size_t n;
  char *upper, *work;
  bool volatile_; /* see overlay_mount */
};

/* fsopen/fsconfig/fsmount/move_mount: one call per layer. -1 with errno. */
static int
mount_fsconfig (const char *target, const struct overlay_dirs *d)
{
  cleanup_fd int fs = fsopen ("overlay", FSOPEN_CLOEXEC);
  if (fs < 0)
    return -1;
  for (size_t i = 0; i < N_ELEMENTS (fixed_flags); i++)
    if (fsconfig (fs, FSCONFIG_SET_FLAG, fixed_flags[i], NULL, 0) < 0)
      return -1;
  for (size_t i = 0; i < N_ELEMENTS (fixed_strings); i++)
    if (fsconfig (fs, FSCONFIG_SET_STRING, fixed_strings[i][0], fixed_strings[i][1], 0) < 0)
      return -1;
  if (d->volatile_ && fsconfig (fs, FSCONFIG_SET_FLAG, "volatile", NULL, 0) < 0)
    return -1;
  for (size_t i = 0; i < d->n; i++)
    if (fsconfig (fs, FSCONFIG_SET_STRING, "lowerdir+", d->lowers[i], 0) < 0)
      return -1;
  if (fsconfig (fs, FSCONFIG_SET_STRING, "upperdir", d->upper, 0) < 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "workdir", d->work, 0) < 0
      || fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  cleanup_fd int mnt = fsmount (fs, FSMOUNT_CLOEXEC, 0);
  if (mnt < 0)
    return -1;
  return move_mount (mnt, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
}

/* PATH with the characters overlayfs's option parser splits on escaped. */
static void
append_escaped (struct strbuf *sb, const char *path)
{
  for (const char *c = path; *c != '\0'; c++)
    {
      if (*c == ',' || *c == ':' || *c == '\\')
        strbuf_append_c (sb, '\\');
      strbuf_append_c (sb, *c);
    }
}

/* The option string of mount(2); NULL when it does not fit in a page. */
static char *
mount_data (const struct overlay_dirs *d)
{
  struct strbuf sb = { 0 };
  for (size_t i = 0; i < N_ELEMENTS (fixed_flags); i++)
    strbuf_appendf (&sb, "%s,", fixed_flags[i]);
  for (size_t i = 0; i < N_ELEMENTS (fixed_strings); i++)
    strbuf_appendf (&sb, "%s=%s,", fixed_strings[i][0], fixed_strings[i][1]);
  if (d->volatile_)
    strbuf_append (&sb, "volatile,");
  strbuf_append (&sb, "lowerdir=");
  for (size_t i = 0; i < d->n; i++)
    {
      if (i > 0)
        strbuf_append_c (&sb, ':');
      append_escaped (&sb, d->lowers[i]);
    }
  strbuf_append (&sb, ",upperdir=");
  append_escaped (&sb, d->upper);
  strbuf_append (&sb, ",workdir=");
  append_escaped (&sb, d->work);
  char *data = strbuf_steal (&sb);
  if (strlen (data) >= MOUNT_DATA_MAX)
    {
      free (data);
      return NULL;
    }
  return data;
}

/* Mount D on TARGET: fsconfig, else mount(2). -1 with errno and *TOO_MANY set when the
 * layers fit neither way. */
static int
mount_dirs (const char *target, const struct overlay_dirs *d, bool *too_many)
{
  *too_many = false;
  if (mount_fsconfig (target, d) == 0)
    return 0;
  int fsconfig_errno = errno;
  cleanup_free char *data = mount_data (d);
  if (data == NULL)
    {
      *too_many = true;
      errno = fsconfig_errno;
      return -1;
    }
  return mount ("overlay", target, "overlay", 0, data);
}

static void
dirs_clear (struct overlay_dirs *d)
{
  free_string_array (d->lowers, d->n);
  free (d->upper);
  free (d->work);
}

void
overlay_mount (const char *name, const char *target, char *const *layers, const char *dir,
               bool throwaway)
{
  size_t n = strv_length (layers);
  if (n == 0)
    die ("cannot mount root '%s': its metadata names no layers", name);
  if (n > OVERLAY_MAX_LAYERS)
    die ("cannot mount root '%s': %zu layers, more than overlayfs stacks (%d)", name, n,
         OVERLAY_MAX_LAYERS);
  struct overlay_dirs d = { .lowers = xcalloc (n, sizeof (char *)), .n = n,
                            .upper = xasprintf ("%s/upper", dir),
                            .work = xasprintf ("%s/work", dir), .volatile_ = throwaway };
  /* overlayfs leaves work/work/incompat/volatile behind a volatile mount and refuses the
   * next one until it is gone: its work files are scratch, all of work/work goes. */
  cleanup_free char *scratch = xasprintf ("%s/work", d.work);
  if (throwaway && rm_rf_at (AT_FDCWD, scratch) < 0)
    die_with_error ("cannot mount root '%s': cannot clear %s", name, scratch);
  for (size_t i = 0; i < n; i++)
    {
      /* Top first: the metadata lists them bottom first. */
      d.lowers[i] = overlay_layer_tree (layers[n - 1 - i]);
      if (d.lowers[i] == NULL)
        die ("cannot mount root '%s': invalid layer '%s' in its metadata", name, layers[n - 1 - i]);
      struct stat st;
      if (stat (d.lowers[i], &st) < 0 || !S_ISDIR (st.st_mode))
        die ("cannot mount root '%s': its layer %s is not in the layer store (%s): remove "
             "the root and create it again", name, layers[n - 1 - i], d.lowers[i]);
    }
  bool too_many;
  if (mount_dirs (target, &d, &too_many) < 0)
    {
      if (too_many)
        die ("cannot mount root '%s': %zu layers do not fit in this kernel's overlay mount "
             "options (fsconfig lowerdir+ needs Linux 6.8: %s)", name, n, strerror (errno));
      die_with_error ("cannot mount root '%s': overlay of %zu layers on %s", name, n, target);
    }
  dirs_clear (&d);
}

void
overlay_mount_root (const struct store_paths *p, const char *name, const struct meta *m,
                    bool throwaway)
{
  cleanup_free char *root = paths_root (p, name);
  cleanup_free char *dir = paths_overlay (p, name);
  overlay_mount (name, root, m->layers, dir, throwaway);
}

void
overlay_store_namespaces (const char *name)
{
  static bool made;
  if (made)
    return;
  if (userns_enter_identity () < 0)
    {
      cleanup_free char *why = userns_unavailable_reason (errno);
      die ("cannot open root '%s': it is an overlay root, which needs user namespaces (%s)",
           name, why);
    }
  if (unshare (CLONE_NEWNS) < 0)
    die_with_error ("cannot open root '%s': cannot make a mount namespace", name);
  /* "none": the type of a propagation change is ignored (and NULL upsets valgrind). */
  if (mount ("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
    die_with_error ("cannot open root '%s': cannot make the mounts private", name);
  made = true;
}

/* Whether PATH is an overlayfs mount: the root holder's, when enter-devroot joined its
 * namespaces before executing the helper. */
static bool
is_overlay_mount (const char *path)
{
  struct statfs sf;
  return statfs (path, &sf) == 0 && sf.f_type == OVERLAYFS_SUPER_MAGIC;
}

void
overlay_store_mount (const struct store_paths *p, const char *name, const struct meta *m)
{
  if (!overlay_is_root (m))
    return;
  cleanup_free char *root = paths_root (p, name);
  if (is_overlay_mount (root))
    {
      /* The holder's one mount (enter_join_overlay_holder). A user namespace of our own
       * inside its (the exec dropped the capabilities): a directory of mode 000 in the
       * root stays readable, as in the root's own root. */
      verbose ("root '%s': reading its holder's overlay mount", name);
      if (userns_enter_identity () < 0)
        die_with_error ("cannot open root '%s': cannot make a user namespace", name);
      return;
    }
  overlay_store_namespaces (name);
  /* A throwaway root's job mounted it volatile, whose mark refuses any later mount until
   * it is cleared: run --save's export mounts it the same way. */
  overlay_mount_root (p, name, m, str_has_prefix (name, EPHEMERAL_PREFIX));
}

int
overlay_remove_dirs (const struct store_paths *p, const char *name)
{
  cleanup_free char *dir = paths_overlay (p, name);
  return rm_rf_at (AT_FDCWD, dir);
}

/* In the probe's child: 0 when the overlay of DIR/l with DIR/u and DIR/w mounts on DIR/m. */
static int
probe_child (const char *dir)
{
  if (userns_enter_identity () < 0 || unshare (CLONE_NEWNS) < 0
      || mount ("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
    return 1;
  char *lower = xasprintf ("%s/l", dir);
  struct overlay_dirs d = { .lowers = &lower, .n = 1, .upper = xasprintf ("%s/u", dir),
                            .work = xasprintf ("%s/w", dir), .volatile_ = true };
  cleanup_free char *target = xasprintf ("%s/m", dir);
  bool too_many;
  return mount_dirs (target, &d, &too_many) < 0;
}

/* overlay_probe; *ANSWERED: the child ran and said. */
static bool
probe_run (const struct store_paths *p, bool *answered)
{
  *answered = false;
  if (mkdir_p (p->overlays, OVERLAY_DIR_MODE) < 0)
    return false;
  cleanup_free char *dir = xasprintf ("%s/.probe.XXXXXX", p->overlays);
  if (mkdtemp (dir) == NULL)
    return false;
  bool ok = false;
  static const char *const subdirs[] = { "l", "u", "w", "m" };
  size_t made = 0;
  for (; made < N_ELEMENTS (subdirs); made++)
    {
      cleanup_free char *sub = xasprintf ("%s/%s", dir, subdirs[made]);
      if (mkdir (sub, OVERLAY_DIR_MODE) < 0)
        break;
    }
  if (made == N_ELEMENTS (subdirs))
    {
      fflush (NULL);
      pid_t pid = fork ();
      if (pid == 0)
        _exit (probe_child (dir));
      int status;
      while (pid > 0 && waitpid (pid, &status, 0) < 0)
        if (errno != EINTR)
          {
            pid = -1;
            break;
          }
      ok = pid > 0 && WIFEXITED (status) && WEXITSTATUS (status) == 0;
      *answered = pid > 0;
    }
  if (rm_rf_at (AT_FDCWD, dir) < 0)
    warn ("cannot remove %s: %s", dir, strerror (errno));
  return ok;
}

/* The probe's answer holds for one kernel and the sysctls that let an unprivileged user
 * make a user namespace: "RELEASE VERSION max=N clone=N apparmor=N" (a sysctl absent is
 * "-"). A kernel updated or a sysctl changed is a new key, so the probe runs again. */
static char *
probe_key (void)
{
  struct utsname u;
  if (uname (&u) < 0)
    return NULL;
  static const char *const sysctls[] = { SYSCTL_MAX_USER_NAMESPACES,
                                          SYSCTL_UNPRIVILEGED_USERNS_CLONE,
                                          SYSCTL_APPARMOR_RESTRICT_USERNS };
  struct strbuf sb = { 0 };
  strbuf_appendf (&sb, "%s %s", u.release, u.version);
  for (size_t i = 0; i < N_ELEMENTS (sysctls); i++)
    {
      cleanup_free char *v = read_first_line (sysctls[i]);
      strbuf_appendf (&sb, " %s", v != NULL ? v : "-");
    }
  return strbuf_steal (&sb);
}

bool
overlay_probe_cached (const struct store_paths *p)
{
  cleanup_free char *key = probe_key ();
  cleanup_free char *path = xasprintf ("%s/" OVERLAY_PROBE_FILE, p->overlays);
  cleanup_free char *line = key != NULL ? read_first_line (path) : NULL;
  if (line != NULL && str_has_prefix (line, key))
    {
      const char *answer = line + strlen (key);
      if (strcmp (answer, " yes") == 0)
        return true;
      if (strcmp (answer, " no") == 0)
        return false;
    }
  bool answered;
  bool ok = probe_run (p, &answered);
  /* Only an index, kept when the child answered (a probe that could not start says nothing
   * of the kernel): a failure to write it costs the next create another probe. */
  if (key == NULL || !answered)
    return ok;
  cleanup_free char *text = xasprintf ("%s %s\n", key, ok ? "yes" : "no");
  if (atomic_file_write (AT_FDCWD, path, text, strlen (text), 0600, 0) < 0)
    verbose ("cannot keep the overlay probe's answer in %s: %s", path, strerror (errno));
  return ok;
}

bool
overlay_probe (const struct store_paths *p)
{
  bool answered;
  return probe_run (p, &answered);
}

/* Where a new devroot's bytes come from: an open fd, a description, an expected digest. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "store/oci/oci-ref.h"
#include "store/source.h"

#define DEFAULT_TEMPLATE_FILE "minimal.tar.gz"

/* Whether a missing file's PATH reads as docker's habit of naming an image without a
 * scheme: REGISTRY:PORT/REPO, REPO:TAG, localhost/REPO (a ':' or localhost/, where a
 * tarball's name rarely has one), and is a valid docker:// reference. */
static bool
looks_like_image (const char *path)
{
  if (path[0] == '/' || path[0] == '.'
      || (strchr (path, ':') == NULL && strncmp (path, "localhost/", strlen ("localhost/")) != 0))
    return false;
  cleanup_free char *ref = xasprintf ("docker://%s", path);
  struct oci_ref r;
  const char *why;
  if (oci_ref_parse (ref, &r, &why) < 0)
    return false;
  oci_ref_clear (&r);
  return true;
}

void
source_open_file (struct source *src, const char *path)
{
  struct stat st;
  if (strcmp (path, "-") == 0)
    {
      /* `docker export c | enter-devroot create x --from -` */
      if (isatty (STDIN_FILENO))
        die ("--from -: standard input is a terminal: pipe an archive into it");
      src->fd = fcntl (STDIN_FILENO, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
      if (src->fd < 0)
        die_with_error ("--from -: cannot read standard input");
      src->description = xstrdup ("standard input");
      src->origin = xstrdup ("-");
      src->expected_sha256 = NULL;
      return;
    }
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && errno == ENOENT && looks_like_image (path))
    die ("cannot open %s: %s (an image? did you mean docker://%s)", path, strerror (ENOENT),
         path);
  if (fd < 0)
    die_with_error ("cannot open %s", path);
  if (fstat (fd, &st) < 0)
    die_with_error ("cannot stat %s", path);
  if (S_ISDIR (st.st_mode))
    die ("cannot read %s: it is a directory, not an archive", path);
  char *absolute = realpath (path, NULL);
  src->fd = fd;
  src->description = xstrdup (path);
  src->origin = absolute != NULL ? absolute : xstrdup (path);
  src->expected_sha256 = NULL;
}

/* The installed template: where configure's prefix put it, else beside the binary in the
 * same layout (bin/../share/enter-devroot/templates), for an installation moved elsewhere
 * or made with `make install prefix=...`. */
static char *
installed_template (void)
{
  char *path = xasprintf ("%s/%s", TEMPLATEDIR, DEFAULT_TEMPLATE_FILE);
  if (access (path, F_OK) == 0)
    return path;
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return path;
  exe[n] = '\0';
  char *slash = strrchr (exe, '/');
  if (slash == NULL)
    return path;
  *slash = '\0';
  cleanup_free char *beside = xasprintf ("%s/../share/%s/templates/%s", exe, PACKAGE_TARNAME,
                                         DEFAULT_TEMPLATE_FILE);
  if (access (beside, F_OK) != 0)
    return path;
  free (path);
  return steal_pointer (&beside);
}

char *
source_default_template_path (void)
{
  const char *override = getenv ("ENTER_DEVROOT_DEFAULT_TEMPLATE");
  char *path = override != NULL && override[0] != '\0' ? xstrdup (override)
                                                       : installed_template ();
  if (access (path, F_OK) < 0)
    die_with_error ("default template %s is missing (reinstall enter-devroot, or set "
                    "ENTER_DEVROOT_DEFAULT_TEMPLATE)", path);
  return path;
}

void
source_open_default_template (struct source *src)
{
  cleanup_free char *path = source_default_template_path ();
  source_open_file (src, path);
}

void
source_clear (struct source *src)
{
  if (src->fd >= 0)
    close (src->fd);
  src->fd = -1;
  char *owned[] = { src->description, src->origin, src->expected_sha256 };
  free_strings (owned, N_ELEMENTS (owned));
  src->description = src->origin = src->expected_sha256 = NULL;
}

int
sha256_hex_normalize (const char *in, char out[SHA256_HEX_LEN + 1])
{
  if (strlen (in) != SHA256_HEX_LEN)
    return -1;
  for (size_t i = 0; i < SHA256_HEX_LEN; i++)
    {
      char c = in[i];
      if (c >= 'A' && c <= 'F')
        c = (char) (c - 'A' + 'a');
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
        return -1;
      out[i] = c;
    }
  out[SHA256_HEX_LEN] = '\0';
  return 0;
}

/* Templates and URLs as sources: catalogue -> cache -> verified fd.
 *
 * The order matters: a file is downloaded into partial/, hashed while it streams, compared
 * with the digest the catalogue (or --sha256) promised, and only then renamed into the
 * content-addressed cache. The fd it was written through is what `create` unpacks from, and
 * the extractor hashes it again as it reads, so the unpacked bytes are the checked ones
 * even if something rewrote the cache file in between. A cached file is re-hashed from the
 * fd it is opened on before being used. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/paths.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/cache/cache.h"
#include "store/cache/catalog.h"
#include "store/cache/digest.h"
#include "store/cache/download.h"
#include "store/builtin.h"
#include "store/cache/fetch.h"
#include "store/layers/layers.h"
#include "store/progress.h"
#include "store/cache/userconfig.h"

#define URL_KEY_PREFIX "url-"
/* A download whose size nobody announced (--from URL, a catalogue entry without size) still
 * must not fill the disk: ENTER_DEVROOT_MAX_DOWNLOAD bytes, by default this many. */
#define DEFAULT_MAX_DOWNLOAD (64ULL * 1024 * 1024 * 1024)

static uint64_t
max_download (void)
{
  const char *s = getenv ("ENTER_DEVROOT_MAX_DOWNLOAD");
  if (s == NULL || s[0] == '\0')
    return DEFAULT_MAX_DOWNLOAD;
  char *end;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0 || *end != '\0' || v == 0 || s[0] == '-')
    die ("invalid ENTER_DEVROOT_MAX_DOWNLOAD '%s': expected a number of bytes", s);
  return v;
}

bool
fetch_is_url (const char *arg)
{
  const char *sep = strstr (arg, "://");
  if (sep == NULL || sep == arg)
    return false;
  for (const char *p = arg; p < sep; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
          || *p == '+' || *p == '-' || *p == '.'))
      return false;
  return true;
}

/* Progress and notes go to a terminal only: a log or a CI job gets errors and nothing else. */
static bool
chatty (const struct fetch_opts *o)
{
  return !o->quiet && isatty (STDERR_FILENO);
}

struct loaded_catalog
{
  char *index_url;
  struct catalog cat;
};

/* The last catalogue fetched from an index URL, kept (catalogs/ + the SHA-256 of the URL)
 * for when the index cannot be reached. It maps template names to the digests that decide
 * what is trusted, and nothing can verify it (no digest of it is known beforehand, it is
 * not signed): so it is kept where only the user can write, in their own cache directory
 * even when downloads go to a shared `cache = DIR`, and used only when it is theirs and
 * nobody else can write it. The files it names are verified against its digests as always. */
static char *
saved_catalog_path (const char *index_url)
{
  cleanup_free char *home = paths_xdg_dir ("XDG_CACHE_HOME", ".cache");
  char h[SHA256_HEX_LEN + 1];
  sha256_string (index_url, h);
  cleanup_free char *dir = xasprintf ("%s/enter-devroot/catalogs", home);
  if (mkdir_p (dir, 0700) < 0)
    die_with_error ("cannot create cache directory %s", dir);
  return xasprintf ("%s/%s", dir, h);
}

/* The saved catalogue at PATH, or NULL when there is none the user can trust: it and its
 * directory must be theirs alone (then the error says the index cannot be reached). */
static char *
load_saved_catalog (const char *path, size_t *len, time_t *when)
{
  struct stat st, dst;
  cleanup_fd int fd = open_regular_at (AT_FDCWD, path, O_RDONLY, &st);
  cleanup_free char *dir = xstrdup (path);
  *strrchr (dir, '/') = '\0';
  if (fd < 0 || st.st_uid != getuid () || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0
      || stat (dir, &dst) < 0 || dst.st_uid != getuid () || (dst.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return NULL;
  *when = st.st_mtime;
  return read_fd_all (fd, CATALOG_MAX_BYTES, len);
}

/* Best effort: a catalogue that cannot be saved is only not available offline. */
static void
save_catalog (const char *path, const char *text, size_t len)
{
  atomic_file_write (AT_FDCWD, path, text, len, 0600, 0);
}

static void
load_catalog (const struct fetch_opts *o, struct loaded_catalog *lc)
{
  lc->index_url = config_index_url (o->index, true);
  struct download_opts d = { .cacert = o->cacert, .quiet = true,
                             .insecure_http = o->insecure_http };
  size_t len;
  cleanup_free char *saved = saved_catalog_path (lc->index_url);
  cleanup_free char *why = NULL;
  cleanup_free char *text = download_to_memory (lc->index_url, CATALOG_MAX_BYTES, &d, &why, &len);
  if (text == NULL)
    {
      time_t mtime;
      text = load_saved_catalog (saved, &len, &mtime);
      if (text == NULL)
        die ("cannot download %s: %s", lc->index_url, why);
      cleanup_free char *when = format_rfc3339_utc (mtime);
      warn ("cannot download %s (%s): using the copy fetched at %s", lc->index_url, why, when);
    }
  cleanup_free char *error = NULL;
  if (catalog_parse (text, len, &lc->cat, &error) < 0)
    die ("catalogue %s: %s", lc->index_url, error);
  if (why == NULL)
    save_catalog (saved, text, len);
}

static void
loaded_catalog_clear (struct loaded_catalog *lc)
{
  catalog_clear (&lc->cat);
  free (lc->index_url);
}

static char *
entry_url (const struct loaded_catalog *lc, const struct catalog_entry *e)
{
  char *url = NULL;
  cleanup_free char *error = NULL;
  if (url_resolve (lc->index_url, e->url, &url, &error) < 0)
    die ("catalogue %s: line %u: template '%s': %s", lc->index_url, e->line, e->name, error);
  return url;
}

static const struct catalog_entry *
find_entry (const struct loaded_catalog *lc, const char *name)
{
  const struct catalog_entry *e = catalog_find (&lc->cat, name);
  if (e == NULL)
    die ("template '%s': not in catalogue %s (see '%s templates')", name, lc->index_url,
         PROGRAM_NAME);
  return e;
}

int
fetch_to_cache (const char *url, const char *expected, uint64_t size, const char *label,
                const struct fetch_opts *o, char hex[SHA256_HEX_LEN + 1], bool *downloaded)
{
  struct cache c;
  cache_open (&c);
  char url_hash[SHA256_HEX_LEN + 1];
  cleanup_free char *key = NULL;
  if (expected != NULL)
    key = xstrdup (expected);
  else
    {
      sha256_string (url, url_hash);
      key = xasprintf (URL_KEY_PREFIX "%s", url_hash);
    }

  /* Held until the file is in the cache: a concurrent fetch of the same file waits here,
   * then finds it cached instead of downloading it again. */
  cleanup_fd int lockfd = cache_lock (&c, key, !chatty (o));
  (void) lockfd; /* only held, released when this returns */
  *downloaded = false;
  if (expected != NULL)
    {
      int fd = cache_open_verified (&c, expected);
      if (fd >= 0)
        {
          memcpy (hex, expected, SHA256_HEX_LEN + 1);
          cache_clear (&c);
          return fd;
        }
    }

  cleanup_fd int dirfd = open (c.partial, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dirfd < 0)
    die_with_error ("cannot open %s", c.partial);
  cleanup_free char *name = cache_partial_name (&c, key);
  struct download_opts d = { .cacert = o->cacert, .quiet = !chatty (o), .label = label,
                             .max_size = size > 0 ? size : max_download (),
                             .expected_size = size, .headers = o->headers,
                             .insecure_http = o->insecure_http };
  cleanup_fd int fd = download_file (url, dirfd, name, &d, hex);
  if (expected != NULL && strcmp (hex, expected) != 0)
    {
      download_discard (dirfd, name);
      die ("%s: SHA-256 mismatch: expected %s, got %s (download deleted)", url, expected, hex);
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    die_with_error ("cannot stat the download of %s", url);
  if (size > 0 && expected != NULL && (uint64_t) st.st_size != size)
    {
      /* The digest matched, so the catalogue's size is what is wrong: say so, but the
       * bytes are the promised ones. */
      warn ("%s: %jd bytes, but the catalogue says %" PRIu64, url, (intmax_t) st.st_size,
            size);
    }
  cache_commit (&c, name, fd, hex, url);
  *downloaded = true;
  cache_clear (&c);
  return steal_fd (&fd);
}

static bool
is_cached (const char *hex)
{
  struct cache c;
  cleanup_free char *base = config_cache_dir ();
  cache_init (&c, base);
  cleanup_free char *path = xasprintf ("%s/%s", c.sha256, hex);
  cache_clear (&c);
  return access (path, F_OK) == 0;
}

void
fetch_list_templates (const struct fetch_opts *o, bool json)
{
  /* The configured catalogue's templates first, then the built-in ones (builtin.h). */
  struct loaded_catalog lc = { 0 };
  cleanup_free char *index = config_index_url (o->index, false);
  if (index != NULL)
    load_catalog (o, &lc);
  struct strbuf sb = { 0 };
  if (json)
    strbuf_append (&sb, "[");
  else
    strbuf_appendf (&sb, "%-24s %10s  %-6s  %s\n", "NAME", "SIZE", "CACHED", "DESCRIPTION");
  for (size_t i = 0; i < lc.cat.n_entries; i++)
    {
      const struct catalog_entry *e = &lc.cat.entries[i];
      cleanup_free char *url = entry_url (&lc, e);
      bool cached = is_cached (e->sha256);
      if (json)
        {
          strbuf_append (&sb, i > 0 ? ",\n  {\"name\": " : "\n  {\"name\": ");
          json_append_string (&sb, e->name);
          strbuf_append (&sb, ", \"url\": ");
          json_append_string (&sb, url);
          strbuf_appendf (&sb, ", \"sha256\": \"%s\", \"size_bytes\": ", e->sha256);
          if (e->has_size)
            strbuf_appendf (&sb, "%" PRIu64, e->size);
          else
            strbuf_append (&sb, "null");
          strbuf_append (&sb, ", \"description\": ");
          json_append_string (&sb, e->description);
          strbuf_appendf (&sb, ", \"cached\": %s}", cached ? "true" : "false");
        }
      else
        {
          cleanup_free char *size = e->has_size ? format_bytes (e->size) : xstrdup ("?");
          cleanup_free char *description = printable_copy (e->description);
          strbuf_appendf (&sb, "%-24s %10s  %-6s  %s\n", e->name, size, cached ? "yes" : "no",
                          description);
        }
    }
  bool first = lc.cat.n_entries == 0;
  builtin_list (&sb, json, &first);
  if (json)
    strbuf_append (&sb, "\n]\n");
  cleanup_free char *text = strbuf_steal (&sb);
  fputs (text, stdout);
  if (index != NULL)
    loaded_catalog_clear (&lc);
}

/* The cached file of template NAME, verified, downloaded when missing; -1 when MISSING_OK
 * and the catalogue has no such template. With LAYER (create's), a template whose layer the
 * caller's layer store holds is not looked up in the download cache at all: -2, its layer in
 * LAYER (held), its digest in HEX. */
static int
open_template (const char *name, const struct fetch_opts *o, char **url_out,
               char hex[SHA256_HEX_LEN + 1], bool *downloaded, bool missing_ok,
               char layer[SHA256_HEX_LEN + 1])
{
  name_check (name);
  if (missing_ok)
    {
      cleanup_free char *index = config_index_url (o->index, false);
      if (index == NULL)
        return -1;
    }
  struct loaded_catalog lc = { 0 };
  load_catalog (o, &lc);
  if (missing_ok && catalog_find (&lc.cat, name) == NULL)
    {
      loaded_catalog_clear (&lc);
      return -1;
    }
  const struct catalog_entry *e = find_entry (&lc, name);
  char *url = entry_url (&lc, e);
  if (layer != NULL && archive_layer (e->sha256, layer))
    {
      /* The catalogue's digest names bytes this user unpacked before, checked against it
       * then: the root is that layer, and the (maybe shared) download cache is not read. */
      memcpy (hex, e->sha256, SHA256_HEX_LEN + 1);
      *downloaded = false;
      loaded_catalog_clear (&lc);
      *url_out = url;
      return -2;
    }
  int fd = fetch_to_cache (url, e->sha256, e->has_size ? e->size : 0, name, o, hex, downloaded);
  loaded_catalog_clear (&lc);
  *url_out = url;
  return fd;
}

bool
fetch_template (const char *name, const struct fetch_opts *o)
{
  cleanup_free char *url = NULL;
  char hex[SHA256_HEX_LEN + 1];
  bool downloaded;
  int fd = open_template (name, o, &url, hex, &downloaded, true, NULL);
  if (fd < 0)
    return false;
  close (fd);
  struct cache c;
  cleanup_free char *base = config_cache_dir ();
  cache_init (&c, base);
  if (chatty (o))
    fprintf (stderr, "%s: %s %s (sha256 %s)\n", PROGRAM_NAME, name,
             downloaded ? "downloaded and verified" : "already cached and verified", hex);
  printf ("%s/%s\n", c.sha256, hex);
  cache_clear (&c);
  return true;
}

bool
source_open_template (struct source *src, const char *name, const struct fetch_opts *o)
{
  cleanup_free char *url = NULL;
  char hex[SHA256_HEX_LEN + 1];
  bool downloaded;
  char layer[SHA256_HEX_LEN + 1];
  src->fd = open_template (name, o, &url, hex, &downloaded, true, layer);
  if (src->fd == -1)
    return false;
  if (src->fd == -2)
    {
      src->fd = -1;
      verbose ("template %s: sha256:%s is layer sha256:%s in the layer store: the download "
               "cache is not read", name, hex, layer);
    }
  src->description = xasprintf ("template %s (%s)", name, url);
  src->origin = xasprintf ("template %s (%s)", name, url);
  src->expected_sha256 = xstrdup (hex);
  src->verified = true;
  return true;
}

void
fetch_template_missing (const char *name, const struct fetch_opts *o)
{
  cleanup_free char *index = config_index_url (o->index, false);
  if (index == NULL)
    die ("template '%s': not a built-in template (see '%s templates'), and no template "
         "catalogue configured to look it up in: pass --index URL, set ENTER_DEVROOT_INDEX, or "
         "put 'index = URL' in the config file", name, PROGRAM_NAME);
  die ("template '%s': not in catalogue %s (see '%s templates')", name, index, PROGRAM_NAME);
}

void
source_open_url (struct source *src, const char *url, const char *sha256, bool no_verify,
                 const struct fetch_opts *o)
{
  char expected[SHA256_HEX_LEN + 1];
  if (sha256 != NULL && sha256_hex_normalize (sha256, expected) < 0)
    die ("create: invalid --sha256 '%s': expected 64 hexadecimal digits", sha256);
  if (sha256 == NULL && !no_verify)
    die ("create: --from %s: a download needs --sha256 HEX to be verified (or --no-verify to "
         "accept whatever the server sends)", url);
  if (sha256 == NULL)
    warn ("--no-verify: %s will be unpacked WITHOUT checking its integrity; anyone who can "
          "alter it in transit or on the server controls what you unpack", url);
  char hex[SHA256_HEX_LEN + 1];
  bool downloaded;
  src->fd = fetch_to_cache (url, sha256 != NULL ? expected : NULL, 0, url, o, hex, &downloaded);
  src->description = xstrdup (url);
  src->origin = xstrdup (url);
  src->expected_sha256 = xstrdup (hex);
  src->verified = true;
}

void
fetch_cache_command (const char *action, bool json, bool quiet)
{
  struct cache c;
  cache_open_existing (&c);
  if (strcmp (action, "list") == 0)
    cache_list (&c, json);
  else if (strcmp (action, "clean") == 0)
    cache_clean (&c, quiet);
  else
    die ("cache: unknown action '%s': expected list or clean (see '%s help cache')", action,
         PROGRAM_NAME);
  cache_clear (&c);
}

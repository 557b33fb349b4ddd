/* enter-devroot-store: the half of enter-devroot that links libarchive, libcurl and
 * libcrypto: create, templates, fetch, cache, export and publish. enter-devroot execs it with its own argv
 * (see helper.h); run by hand it does the same commands. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ci/ci.h"
#include "common/cli.h"
#include "common/helper.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/overlay.h"
#include "common/options.h"
#include "common/paths.h"
#include "common/resolved.h"
#include "common/root-create.h"
#include "common/roots.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/builtin.h"
#include "store/ship/export.h"
#include "store/ship/push.h"
#include "store/extract/extract.h"
#include "store/cache/fetch.h"
#include "store/oci/image-sniff.h"
#include "store/interrupt.h"
#include "store/layers/layers.h"
#include "store/oci/oci.h"
#include "store/oci/oci-ref.h"
#include "store/progress.h"
#include "store/ship/publish.h"
#include "store/source.h"
#include "store/store-create.h"
#include "store/layers/tree.h"
#include "store/cache/userconfig.h"

/* Spare a download that could only end in "already exists"; store_create checks again
 * under its lock, so this is an early answer, not the decision. */
static void
refuse_existing_root (const char *name)
{
  struct store_paths p;
  store_paths_from_env (&p);
  cleanup_free char *root = paths_root (&p, name);
  store_paths_clear (&p);
  if (access (root, F_OK) == 0)
    die ("cannot create '%s': it already exists (%s)", name, root);
}

/* A root may unpack to at most this many bytes unless --max-size or
 * ENTER_DEVROOT_MAX_ROOT_SIZE say otherwise: a decompression bomb stops here. */
#define DEFAULT_MAX_ROOT_SIZE (64ULL * 1024 * 1024 * 1024)

static uint64_t
max_root_size (const struct cli *cli)
{
  if (cli->max_size != 0)
    return cli->max_size;
  const char *s = getenv ("ENTER_DEVROOT_MAX_ROOT_SIZE");
  if (s == NULL || s[0] == '\0')
    return DEFAULT_MAX_ROOT_SIZE;
  uint64_t v;
  if (parse_byte_size (s, &v) < 0 || v == 0)
    die ("invalid ENTER_DEVROOT_MAX_ROOT_SIZE '%s': expected a byte count such as 512M or 8G", s);
  return v;
}

static void
copy_tree (struct extractor *x, int rootfd, void *dir)
{
  (void) rootfd;
  tree_copy (x, dir);
}

/* --from DIR: the tree copied under an archive's rules (tree.c); the metadata records its
 * absolute path and no digest. */
static void
create_from_tree (const char *name, const char *dir, const struct extract_opts *xopts)
{
  cleanup_free char *absolute = realpath (dir, NULL);
  if (absolute == NULL)
    die_with_error ("cannot read %s", dir);
  struct meta_image none = { 0 };
  store_create_layered (name, absolute, "", &none, copy_tree, absolute, xopts);
}

/* The file whose identity stands for CLI's local source (resolved.h): an image layout's
 * index.json, a docker-archive or tarball file, the default template, named as typed
 * (resolved_source_file: its symlinks are resolved again at each use of the record); NULL
 * for any other source (nothing is recorded for it). */
static char *
source_stamp_path (const struct cli *cli)
{
  if (cli->from == NULL)
    {
      if (cli->template_name != NULL)
        return NULL;
      cleanup_free char *template = source_default_template_path ();
      return resolved_source_file (template);
    }
  if (!oci_ref_is_image (cli->from))
    return resolved_source_file (cli->from);
  struct oci_ref ref;
  const char *why;
  if (oci_ref_parse (cli->from, &ref, &why) < 0)
    return NULL;
  cleanup_free char *file = ref.kind == OCI_REF_LAYOUT ? xasprintf ("%s/index.json", ref.path)
                            : ref.kind == OCI_REF_ARCHIVE ? xstrdup (ref.path) : NULL;
  oci_ref_clear (&ref);
  return file != NULL ? resolved_source_file (file) : NULL;
}

/* After a create, keep what its source resolved to (the new root's layers and image
 * config) for `run --ephemeral` (resolved.h), when the stamp taken before the create
 * (STAMP of STAMP_PATH) still holds: the source did not change while it was read, and
 * when its layers are stored: a flat root unpacked straight from its source
 * (store-create.h) has none there, and a record must name only layers a run can mount
 * (without one, `run --ephemeral` and `create --overlay` go through the helper, which
 * stores the layers and writes the record). KEY: resolved_key's, taken before the create. */
static void
remember_resolved (const struct cli *cli, const char *key, const char *stamp_path,
                   const char *stamp)
{
  cleanup_free char *now = resolved_stamp (stamp_path);
  if (key == NULL || stamp == NULL || now == NULL || strcmp (now, stamp) != 0)
    return;
  struct meta m;
  if (roots_read_meta (cli->name, &m) && m.layers != NULL && m.layers[0] != NULL
      && layers_stored (m.layers) == strv_length (m.layers))
    resolved_write (key, &m, stamp_path, stamp);
  meta_clear (&m);
}

static void
create_root (const struct cli *cli);

static void
create (const struct cli *cli)
{
  /* The key before the create: unpacking a layer changes the working directory. */
  cleanup_free char *key = resolved_key (cli);
  cleanup_free char *stamp_path = source_stamp_path (cli);
  cleanup_free char *stamp = resolved_stamp (stamp_path);
  create_root (cli);
  remember_resolved (cli, key, stamp_path, stamp);
  creation_announce (cli->name, cli->quiet);
}

/* --from PATH that holds an image (image-sniff.h): the image reference to create from
 * instead, said in one line; NULL for a root filesystem's archive or directory. */
static char *
image_at_path (const struct cli *cli)
{
  const char *path = cli->from;
  if (path == NULL || strcmp (path, "-") == 0 || oci_ref_is_image (path) || fetch_is_url (path))
    return NULL;
  enum image_shape shape = image_shape_of (path);
  if (shape == IMAGE_SHAPE_NONE)
    return NULL;
  const char *what = shape == IMAGE_SHAPE_OCI_LAYOUT ? "an OCI image layout directory"
                     : shape == IMAGE_SHAPE_OCI_ARCHIVE ? "an OCI image layout archive"
                     : "an image archive (docker save, podman save)";
  if (shape == IMAGE_SHAPE_OCI_ARCHIVE)
    die ("cannot create '%s' from %s: it is %s, not a root filesystem: unpack it (mkdir DIR && "
         "tar -xf %s -C DIR) and create --from oci:DIR", cli->name, path, what, path);
  const char *prefix = shape == IMAGE_SHAPE_OCI_LAYOUT ? "oci:" : "docker-archive:";
  if (strchr (path, ':') != NULL)
    die ("cannot create '%s' from %s: it is %s, and a path with ':' cannot follow %s: rename "
         "it", cli->name, path, what, prefix);
  char *ref = xasprintf ("%s%s", prefix, path);
  if (!cli->quiet)
    fprintf (stderr, "%s: %s is %s: creating '%s' from %s\n", PROGRAM_NAME, path, what,
             cli->name, ref);
  return ref;
}

static void
create_root (const struct cli *cli)
{
  struct source src = { .fd = -1 };
  struct fetch_opts fo = { .index = cli->index, .cacert = cli->cacert, .quiet = cli->quiet };
  name_check (cli->name); /* before any download, not after */
  uint64_t max_size = max_root_size (cli);
  struct store_paths p;
  store_paths_from_env (&p);
  bool overlay = overlay_layout_wanted (&p, cli->layout, cli->name);
  store_paths_clear (&p);
  /* A template the configured catalogue does not list may be a built-in one (builtin.h):
   * an image, or the embedded default. */
  const struct builtin_template *builtin = NULL;
  if (cli->template_name != NULL)
    {
      refuse_existing_root (cli->name);
      if (!source_open_template (&src, cli->template_name, &fo)
          && (builtin = builtin_find (cli->template_name)) == NULL)
        fetch_template_missing (cli->template_name, &fo);
    }
  cleanup_free char *as_image = builtin == NULL ? image_at_path (cli) : NULL;
  const char *image = builtin != NULL ? builtin->image : as_image != NULL ? as_image : cli->from;
  if (image != NULL && oci_ref_is_image (image))
    {
      if (cli->sha256 != NULL || cli->no_verify)
        die ("create: --sha256 and --no-verify do not apply to an image: its manifest names "
             "the digest of every blob (pin one with docker://REPO@sha256:HEX)");
      refuse_existing_root (cli->name);
      cleanup_free char *mirror = config_registry_mirror (cli->insecure_http);
      struct oci_opts oo = { .platform = cli->platform, .cacert = cli->cacert,
                             .insecure_http = cli->insecure_http, .quiet = cli->quiet,
                             .hub_mirror = mirror };
      struct extract_opts xopts = { .max_bytes = max_size, .overlay = overlay,
                                    .keep_layers = cli->keep_layers };
      verbose ("source: the image %s%s", image, builtin != NULL ? " (a built-in template)" : "");
      oci_create (cli->name, image, &oo, &xopts);
      return;
    }
  if (cli->platform != NULL || cli->insecure_http)
    die ("create: --platform and --insecure-http only apply to --from IMAGE "
         "(docker://, oci:, docker-archive:) or a template naming one");
  struct stat dir_st;
  if (cli->from != NULL && !fetch_is_url (cli->from) && stat (cli->from, &dir_st) == 0
      && S_ISDIR (dir_st.st_mode))
    {
      if (cli->sha256 != NULL || cli->no_verify)
        die ("create: --sha256 and --no-verify do not apply to --from DIR");
      if (cli->layout == ROOT_LAYOUT_OVERLAY)
        die ("create: --overlay shares an image's stored layers, and --from DIR has none: "
             "drop --overlay (the tree is copied into a flat root)");
      struct extract_opts xopts = { .max_bytes = max_size };
      verbose ("source: the directory %s", cli->from);
      create_from_tree (cli->name, cli->from, &xopts);
      return;
    }
  if (cli->from != NULL && fetch_is_url (cli->from))
    {
      refuse_existing_root (cli->name);
      source_open_url (&src, cli->from, cli->sha256, cli->no_verify, &fo);
    }
  else if (cli->from != NULL)
    source_open_file (&src, cli->from);
  else if (src.description == NULL) /* the default, or the built-in "minimal"; a catalogue's
                                      * is open (or, fd -1, its layer found) */
    source_open_default_template (&src);
  if (cli->sha256 != NULL && src.expected_sha256 == NULL)
    {
      char hex[SHA256_HEX_LEN + 1];
      if (sha256_hex_normalize (cli->sha256, hex) < 0)
        die ("create: invalid --sha256 '%s': expected 64 hexadecimal digits", cli->sha256);
      src.expected_sha256 = xstrdup (hex);
    }
  verbose ("source: %s (%s)", src.description, src.origin);
  /* Unpacking a large root takes a while: a bar on a terminal, as for downloads. */
  struct stat st;
  bool show = !cli->quiet && isatty (STDERR_FILENO) && fstat (src.fd, &st) == 0
              && S_ISREG (st.st_mode);
  cleanup_free char *label = xasprintf ("unpacking %s", cli->name);
  struct progress bar;
  progress_begin (&bar, show, label, show ? (uint64_t) st.st_size : 0, 0);
  struct extract_opts xopts = { .max_bytes = max_size, .progress = progress_advance,
                                .progress_data = &bar, .overlay = overlay,
                                .keep_layers = cli->keep_layers };
  store_create (cli->name, &src, &xopts);
  progress_end (&bar);
  source_clear (&src);
}

static void
pull_image (const struct cli *cli, const char *image)
{
  cleanup_free char *mirror = config_registry_mirror (cli->insecure_http);
  struct oci_opts oo = { .platform = cli->platform, .cacert = cli->cacert,
                         .insecure_http = cli->insecure_http, .quiet = cli->quiet,
                         .hub_mirror = mirror };
  oci_pull (image, &oo);
}

/* `fetch --from IMAGE`, or `fetch TEMPLATE` resolved as create resolves it: the configured
 * catalogue's entry, else a built-in one: its image pulled (the pinned reference printed,
 * as for --from), or for the embedded default its path, which needs no download. */
static void
fetch (const struct cli *cli)
{
  if (cli->from != NULL)
    {
      pull_image (cli, cli->from);
      return;
    }
  struct fetch_opts fo = { .index = cli->index, .cacert = cli->cacert, .quiet = cli->quiet };
  name_check (cli->name);
  if (fetch_template (cli->name, &fo))
    return;
  const struct builtin_template *builtin = builtin_find (cli->name);
  if (builtin == NULL)
    fetch_template_missing (cli->name, &fo);
  if (builtin->image != NULL)
    {
      pull_image (cli, builtin->image);
      return;
    }
  cleanup_free char *path = source_default_template_path ();
  printf ("%s\n", path);
}

int
main (int argc, char **argv)
{
  refuse_if_privileged_exec ();
  interrupt_install ();
  struct cli cli;
  cli_parse (argc, argv, &cli);

  switch (cli.command)
    {
    case CMD_CREATE:
      create (&cli);
      break;
    case CMD_TEMPLATES:
      {
        struct fetch_opts fo = { .index = cli.index, .cacert = cli.cacert, .quiet = cli.quiet };
        fetch_list_templates (&fo, cli.json);
        break;
      }
    case CMD_FETCH:
      fetch (&cli);
      break;
    case CMD_CACHE:
      fetch_cache_command (cli.cache_action, cli.json, cli.quiet);
      break;
    case CMD_EXPORT:
      export_root (cli.name, cli.output, cli.compress, cli.quiet);
      break;
    case CMD_PUSH:
      {
        struct push_opts po = { .cacert = cli.cacert, .insecure_http = cli.insecure_http,
                                .quiet = cli.quiet };
        push_root (cli.name, cli.output, &po);
        break;
      }
    case CMD_PUBLISH:
      publish (cli.publish_dir, cli.archives, cli.description, cli.quiet);
      break;
    case CMD_GITLAB:
      return ci_gitlab (cli.driver_args);
    case CMD_GITHUB_HOOK:
      return ci_github_hook (cli.driver_args);
    default:
      die ("%s is a helper for create, templates, fetch, cache, export and publish: run '%s %s'",
           STORE_HELPER_NAME, PROGRAM_NAME, argc > 1 ? argv[1] : "--help");
    }
  cli_clear (&cli);
  if (fflush (stdout) != 0 || ferror (stdout))
    die_with_error ("cannot write to standard output");
  return 0;
}

/* The JSON documents of an OCI image, read with libjansson (oci-image.h). */
#include <jansson.h>
#include <stdarg.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/util.h"
#include "store/oci/oci-image.h"
#include "store/oci/oci-ref.h"

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define REF_NAME_ANNOTATION "org.opencontainers.image.ref.name"

/* The layer media types we apply: the extractor recognises the compression from the bytes
 * (and the digest covers them), so the type only has to say "a tar, maybe compressed". */
static const char *const layer_types[] = {
  "application/vnd.oci.image.layer.v1.tar",
  "application/vnd.oci.image.layer.v1.tar+gzip",
  "application/vnd.oci.image.layer.v1.tar+zstd",
  "application/vnd.docker.image.rootfs.diff.tar",
  "application/vnd.docker.image.rootfs.diff.tar.gzip",
  "application/vnd.docker.image.rootfs.diff.tar.zstd",
};

void
oci_descriptor_clear (struct oci_descriptor *d)
{
  char *owned[] = { d->media_type, d->digest };
  free_strings (owned, N_ELEMENTS (owned));
  *d = (struct oci_descriptor) { 0 };
}

void
oci_manifest_clear (struct oci_manifest *m)
{
  oci_descriptor_clear (&m->config);
  for (size_t i = 0; i < m->n_layers; i++)
    oci_descriptor_clear (&m->layers[i]);
  free (m->layers);
  *m = (struct oci_manifest) { 0 };
}

void
oci_platform_clear (struct oci_platform *p)
{
  char *owned[] = { p->os, p->arch, p->variant };
  free_strings (owned, N_ELEMENTS (owned));
  *p = (struct oci_platform) { 0 };
}

/* The GOARCH name of the machine we run on (what image indexes use). */
static void
native_platform (struct oci_platform *p)
{
  static const struct { const char *machine, *arch, *variant; } map[] = {
    { "x86_64", "amd64", NULL }, { "aarch64", "arm64", NULL }, { "armv7l", "arm", "v7" },
    { "armv6l", "arm", "v6" }, { "i686", "386", NULL }, { "i386", "386", NULL },
    { "ppc64le", "ppc64le", NULL }, { "s390x", "s390x", NULL }, { "riscv64", "riscv64", NULL },
  };
  struct utsname u;
  if (uname (&u) < 0)
    die_with_error ("uname");
  p->os = xstrdup ("linux");
  for (size_t i = 0; i < N_ELEMENTS (map); i++)
    if (strcmp (u.machine, map[i].machine) == 0)
      {
        p->arch = xstrdup (map[i].arch);
        p->variant = map[i].variant != NULL ? xstrdup (map[i].variant) : NULL;
        return;
      }
  p->arch = xstrdup (u.machine);
}

void
oci_platform_parse (const char *arg, struct oci_platform *out)
{
  *out = (struct oci_platform) { 0 };
  if (arg == NULL)
    {
      native_platform (out);
      return;
    }
  cleanup_free char *s = xstrdup (arg);
  char *arch = strchr (s, '/');
  char *variant = arch != NULL ? strchr (arch + 1, '/') : NULL;
  if (arch != NULL)
    *arch++ = '\0';
  if (variant != NULL)
    *variant++ = '\0';
  if (arch == NULL || s[0] == '\0' || arch[0] == '\0' || (variant != NULL && variant[0] == '\0')
      || strchr (variant != NULL ? variant : arch, '/') != NULL)
    die ("create: invalid --platform '%s': expected OS/ARCH[/VARIANT], such as linux/amd64",
         arg);
  out->os = xstrdup (s);
  out->arch = xstrdup (arch);
  out->variant = variant != NULL ? xstrdup (variant) : NULL;
}

char *
oci_platform_string (const struct oci_platform *p)
{
  return p->variant != NULL ? xasprintf ("%s/%s/%s", p->os, p->arch, p->variant)
                            : xasprintf ("%s/%s", p->os, p->arch);
}

/* The readers below return -1 with *ERROR (the one-line message, caller frees) on a
 * document they refuse, having freed what they allocated; the public functions die() with
 * that message. */
__attribute__((format (printf, 2, 3))) static int
fail (char **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  *error = str_one_line (xvasprintf (format, args));
  va_end (args);
  return -1;
}

/* R from a reader: on -1, die() with *ERROR (a pointer: the reader sets it, and an
 * argument's value may be read before the reader runs). */
static void
die_on_error (int r, char *const *error)
{
  if (r < 0)
    die ("%s", *error);
}

/* TEXT as JSON into *ROOT, or -1 naming WHAT. */
static int
load_json (const char *text, size_t len, const char *what, json_t **root, char **error)
{
  json_error_t err;
  /* JSON_REJECT_DUPLICATES: two values for one key are read differently by different
   * parsers (the registry's, ours), a known way to make a verified document say two things. */
  *root = json_loadb (text, len, JSON_REJECT_DUPLICATES, &err);
  if (*root == NULL)
    return fail (error, "%s: not valid JSON: %s (line %d)", what, err.text, err.line);
  return 0;
}

/* TEXT as a JSON object into *ROOT, or -1 naming WHAT. */
static int
load_object (const char *text, size_t len, const char *what, json_t **root, char **error)
{
  if (load_json (text, len, what, root, error) < 0)
    return -1;
  if (!json_is_object (*root))
    {
      json_decref (*root);
      *root = NULL;
      return fail (error, "%s: not a JSON object", what);
    }
  return 0;
}

static void
cleanup_jsonp (json_t **p)
{
  json_decref (*p);
}
#define cleanup_json __attribute__((cleanup (cleanup_jsonp)))

/* The string member KEY of OBJ into *OUT, NULL when absent; -1 when it is not a string. */
static int
get_string (json_t *obj, const char *key, const char *what, const char **out, char **error)
{
  json_t *v = json_object_get (obj, key);
  *out = NULL;
  if (v == NULL || json_is_null (v))
    return 0;
  if (!json_is_string (v))
    return fail (error, "%s: \"%s\" is not a string", what, key);
  *out = json_string_value (v);
  return 0;
}

static int
descriptor_parse (json_t *obj, const char *what, struct oci_descriptor *out, char **error)
{
  if (!json_is_object (obj))
    return fail (error, "%s: a descriptor is not an object", what);
  const char *digest, *mt;
  if (get_string (obj, "digest", what, &digest, error) < 0)
    return -1;
  json_t *size = json_object_get (obj, "size");
  if (digest == NULL || !oci_digest_is_valid (digest))
    return fail (error, "%s: a descriptor's digest is missing or not sha256:HEX", what);
  if (!json_is_integer (size) || json_integer_value (size) < 0)
    return fail (error, "%s: descriptor %s has no valid size", what, digest);
  if (get_string (obj, "mediaType", what, &mt, error) < 0)
    return -1;
  *out = (struct oci_descriptor) {
    .media_type = mt != NULL ? xstrdup (mt) : NULL,
    .digest = xstrdup (digest),
    .size = (uint64_t) json_integer_value (size),
  };
  return 0;
}

int
oci_try_document_kind (const char *text, size_t len, const char *media_type, const char *what,
                       enum oci_document_kind *kind, char **error)
{
  cleanup_json json_t *root = NULL;
  const char *mt;
  if (load_object (text, len, what, &root, error) < 0
      || get_string (root, "mediaType", what, &mt, error) < 0)
    return -1;
  if (mt == NULL)
    mt = media_type;
  if (mt != NULL && (strcmp (mt, MT_OCI_INDEX) == 0 || strcmp (mt, MT_DOCKER_LIST) == 0))
    *kind = OCI_DOC_INDEX;
  else if (mt != NULL && (strcmp (mt, MT_OCI_MANIFEST) == 0 || strcmp (mt, MT_DOCKER_MANIFEST) == 0))
    *kind = OCI_DOC_MANIFEST;
  else if (json_is_array (json_object_get (root, "manifests")))
    *kind = OCI_DOC_INDEX;
  else if (json_is_array (json_object_get (root, "layers")))
    *kind = OCI_DOC_MANIFEST;
  else
    return fail (error, "%s: neither an image index nor an image manifest%s%s", what,
                 mt != NULL ? ": media type " : "", mt != NULL ? mt : "");
  return 0;
}

enum oci_document_kind
oci_document_kind (const char *text, size_t len, const char *media_type, const char *what)
{
  enum oci_document_kind kind = OCI_DOC_MANIFEST;
  char *error = NULL;
  die_on_error (oci_try_document_kind (text, len, media_type, what, &kind, &error), &error);
  return kind;
}

/* 1 when ENTRY's platform is WANT, else 0; -1 when a field is not a string. */
static int
platform_matches (json_t *entry, const struct oci_platform *want, const char *what,
                  char **error)
{
  json_t *p = json_object_get (entry, "platform");
  if (!json_is_object (p))
    return 0;
  const char *os, *arch, *variant;
  if (get_string (p, "os", what, &os, error) < 0
      || get_string (p, "architecture", what, &arch, error) < 0
      || get_string (p, "variant", what, &variant, error) < 0)
    return -1;
  if (os == NULL || arch == NULL || strcmp (os, want->os) != 0 || strcmp (arch, want->arch) != 0)
    return 0;
  return want->variant == NULL || (variant != NULL && strcmp (variant, want->variant) == 0);
}

/* The org.opencontainers.image.ref.name annotation of ENTRY into *NAME (NULL: none). */
static int
entry_ref_name (json_t *entry, const char *what, const char **name, char **error)
{
  json_t *ann = json_object_get (entry, "annotations");
  *name = NULL;
  return json_is_object (ann) ? get_string (ann, REF_NAME_ANNOTATION, what, name, error) : 0;
}

/* Index TEXT into *ROOT and its "manifests" array into *LIST (owned by *ROOT). */
static int
load_index (const char *text, size_t len, const char *what, json_t **root, json_t **list,
            char **error)
{
  if (load_object (text, len, what, root, error) < 0)
    return -1;
  *list = json_object_get (*root, "manifests");
  if (!json_is_array (*list))
    return fail (error, "%s: \"manifests\" is not an array", what);
  return 0;
}

static int
try_layout_require_tag (const char *text, size_t len, const char *what, char **error)
{
  cleanup_json json_t *root = NULL;
  json_t *list;
  if (load_index (text, len, what, &root, &list, error) < 0)
    return -1;
  cleanup_free char *tags_str = NULL;
  struct strbuf tags = { 0 };
  const char *first = NULL;
  bool several_tags = false, platforms = false;
  size_t n = json_array_size (list);
  for (size_t i = 0; i < n; i++)
    {
      json_t *entry = json_array_get (list, i);
      const char *name;
      if (entry_ref_name (entry, what, &name, error) < 0)
        {
          free (tags.str);
          return -1;
        }
      platforms |= json_object_get (entry, "platform") != NULL;
      if (name == NULL)
        continue;
      several_tags |= first != NULL && strcmp (first, name) != 0;
      if (first == NULL)
        first = name;
      strbuf_append (&tags, tags.len > 0 ? ", " : "");
      strbuf_append (&tags, name);
    }
  tags_str = tags.str;
  /* Several images, unless the entries are the platforms of one (a flat multi-arch index). */
  if (several_tags || (n > 1 && !platforms))
    return fail (error, "%s: the layout holds %zu images: name one with oci:DIR:TAG (%s%s)",
                 what, n, tags.len > 0 ? "tags: " : "none is tagged: save each with a tag",
                 tags.len > 0 ? tags.str : "");
  return 0;
}

void
oci_layout_require_tag (const char *text, size_t len, const char *what)
{
  char *error = NULL;
  die_on_error (try_layout_require_tag (text, len, what, &error), &error);
}

/* The entry of index LIST (N entries) that TAG or PLATFORM selects into *CHOSEN. */
static int
index_choose (json_t *list, size_t n, const char *what, const char *tag,
              const struct oci_platform *platform, json_t **chosen, char **error)
{
  *chosen = NULL;
  for (size_t i = 0; i < n && *chosen == NULL; i++)
    {
      json_t *entry = json_array_get (list, i);
      if (!json_is_object (entry))
        return fail (error, "%s: a manifest entry is not an object", what);
      if (tag != NULL)
        {
          const char *name;
          if (entry_ref_name (entry, what, &name, error) < 0)
            return -1;
          if (name != NULL && strcmp (name, tag) == 0)
            *chosen = entry;
          continue;
        }
      int match = platform_matches (entry, platform, what, error);
      if (match < 0)
        return -1;
      if (match > 0 || (n == 1 && json_object_get (entry, "platform") == NULL))
        *chosen = entry;
    }
  return 0;
}

int
oci_try_index_select (const char *text, size_t len, const char *what, const char *tag,
                      const struct oci_platform *platform, struct oci_descriptor *out,
                      char **error)
{
  cleanup_json json_t *root = NULL;
  json_t *list;
  if (load_index (text, len, what, &root, &list, error) < 0)
    return -1;
  json_t *chosen;
  if (index_choose (list, json_array_size (list), what, tag, platform, &chosen, error) < 0)
    return -1;
  if (chosen == NULL && tag != NULL)
    return fail (error, "%s: no image tagged '%s'", what, tag);
  if (chosen == NULL)
    {
      cleanup_free char *want = oci_platform_string (platform);
      return fail (error, "%s: no image for platform %s (choose another with --platform)", what,
                   want);
    }
  return descriptor_parse (chosen, what, out, error);
}

void
oci_index_select (const char *text, size_t len, const char *what, const char *tag,
                  const struct oci_platform *platform, struct oci_descriptor *out)
{
  char *error = NULL;
  die_on_error (oci_try_index_select (text, len, what, tag, platform, out, &error), &error);
}

static bool
is_layer_type (const char *mt)
{
  for (size_t i = 0; i < N_ELEMENTS (layer_types); i++)
    if (strcmp (mt, layer_types[i]) == 0)
      return true;
  return false;
}

/* The config and layer descriptors of manifest ROOT into M (which the caller clears). */
static int
manifest_fill (json_t *root, const char *what, struct oci_manifest *m, char **error)
{
  json_t *version = json_object_get (root, "schemaVersion");
  if (!json_is_integer (version) || json_integer_value (version) != 2)
    return fail (error, "%s: schemaVersion is not 2 (schema 1 manifests are not supported)",
                 what);
  json_t *layers = json_object_get (root, "layers");
  if (!json_is_array (layers))
    return fail (error, "%s: \"layers\" is not an array", what);
  if (descriptor_parse (json_object_get (root, "config"), what, &m->config, error) < 0)
    return -1;
  size_t n = json_array_size (layers);
  m->layers = xcalloc (n + 1, sizeof *m->layers);
  for (; m->n_layers < n; m->n_layers++)
    {
      struct oci_descriptor *d = &m->layers[m->n_layers];
      if (descriptor_parse (json_array_get (layers, m->n_layers), what, d, error) < 0)
        return -1;
      if (d->media_type == NULL || !is_layer_type (d->media_type))
        {
          /* Counted, so that oci_manifest_clear frees it. */
          m->n_layers++;
          return fail (error, "%s: layer %s has media type %s, not a tar layer this tool can "
                       "apply", what, d->digest, d->media_type != NULL ? d->media_type
                                                                       : "(none)");
        }
    }
  return 0;
}

int
oci_try_manifest_parse (const char *text, size_t len, const char *what,
                        struct oci_manifest *out, char **error)
{
  cleanup_json json_t *root = NULL;
  if (load_object (text, len, what, &root, error) < 0)
    return -1;
  struct oci_manifest m = { 0 };
  if (manifest_fill (root, what, &m, error) < 0)
    {
      oci_manifest_clear (&m);
      return -1;
    }
  *out = m;
  return 0;
}

void
oci_manifest_parse (const char *text, size_t len, const char *what, struct oci_manifest *out)
{
  char *error = NULL;
  die_on_error (oci_try_manifest_parse (text, len, what, out, &error), &error);
}

/* An array of strings (or null, or absent: NULL) as a NULL-terminated vector, in *OUT. */
static int
get_strv (json_t *obj, const char *key, const char *what, char ***out, char **error)
{
  json_t *v = json_object_get (obj, key);
  *out = NULL;
  if (v == NULL || json_is_null (v))
    return 0;
  if (!json_is_array (v))
    return fail (error, "%s: \"%s\" is not an array of strings", what, key);
  size_t n = json_array_size (v);
  char **strv = xcalloc (n + 1, sizeof (char *));
  for (size_t i = 0; i < n; i++)
    {
      json_t *s = json_array_get (v, i);
      if (!json_is_string (s))
        {
          strv_free (strv);
          return fail (error, "%s: \"%s\" is not an array of strings", what, key);
        }
      strv[i] = xstrdup (json_string_value (s));
    }
  *out = strv;
  return 0;
}

/* The fields of CONFIG (a JSON object) that entering uses, into IMAGE. */
static int
image_fill (json_t *config, const char *what, struct meta_image *image, char **error)
{
  const char *wd, *user;
  if (get_strv (config, "Env", what, &image->env, error) < 0
      || get_string (config, "WorkingDir", what, &wd, error) < 0
      || get_string (config, "User", what, &user, error) < 0)
    return -1;
  image->workdir = wd != NULL ? xstrdup (wd) : NULL;
  image->user = user != NULL ? xstrdup (user) : NULL;
  if (get_strv (config, "Entrypoint", what, &image->entrypoint, error) < 0
      || get_strv (config, "Cmd", what, &image->cmd, error) < 0)
    return -1;
  return 0;
}

static int
diff_ids_fill (json_t *root, const char *what, char ***diff_ids, char **error)
{
  json_t *rootfs = json_object_get (root, "rootfs");
  if (!json_is_object (rootfs))
    return fail (error, "%s: \"rootfs\" is not an object", what);
  if (get_strv (rootfs, "diff_ids", what, diff_ids, error) < 0)
    return -1;
  if (*diff_ids == NULL)
    return fail (error, "%s: rootfs.diff_ids is missing", what);
  for (size_t i = 0; (*diff_ids)[i] != NULL; i++)
    if (!oci_digest_is_valid ((*diff_ids)[i]))
      return fail (error, "%s: rootfs.diff_ids holds '%s', not sha256:HEX", what,
                   (*diff_ids)[i]);
  return 0;
}

int
oci_try_config_parse (const char *text, size_t len, const char *what, struct meta_image *image,
                      char ***diff_ids, char **error)
{
  cleanup_json json_t *root = NULL;
  if (load_object (text, len, what, &root, error) < 0)
    return -1;
  json_t *config = json_object_get (root, "config");
  if (config != NULL && !json_is_null (config) && !json_is_object (config))
    return fail (error, "%s: \"config\" is not an object", what);
  struct meta_image got = { 0 };
  char **ids = NULL;
  if ((json_is_object (config) && image_fill (config, what, &got, error) < 0)
      || (diff_ids != NULL && diff_ids_fill (root, what, &ids, error) < 0))
    {
      strv_free (got.env);
      free (got.workdir);
      free (got.user);
      strv_free (got.entrypoint);
      strv_free (got.cmd);
      strv_free (ids);
      return -1;
    }
  if (json_is_object (config))
    {
      image->env = got.env;
      image->workdir = got.workdir;
      image->user = got.user;
      image->entrypoint = got.entrypoint;
      image->cmd = got.cmd;
    }
  if (diff_ids != NULL)
    *diff_ids = ids;
  return 0;
}

void
oci_config_parse (const char *text, size_t len, const char *what, struct meta_image *image,
                  char ***diff_ids)
{
  char *error = NULL;
  die_on_error (oci_try_config_parse (text, len, what, image, diff_ids, &error), &error);
}

/* REPO:TAG without the default registry and namespace docker and skopeo may write:
 * "docker.io/library/debian:12" and "debian:12" name the same image. */
static const char *
short_repo_tag (const char *s)
{
  if (str_has_prefix (s, "docker.io/"))
    s += strlen ("docker.io/");
  if (str_has_prefix (s, "library/"))
    s += strlen ("library/");
  return s;
}

/* The image of docker save's manifest ROOT (N entries) that REPO_TAG names into *CHOSEN. */
static int
archive_choose (json_t *root, size_t n, const char *what, const char *repo_tag,
                json_t **chosen, char **error)
{
  *chosen = NULL;
  for (size_t i = 0; i < n && *chosen == NULL; i++)
    {
      json_t *entry = json_array_get (root, i);
      if (!json_is_object (entry))
        return fail (error, "%s: an image entry is not an object", what);
      if (repo_tag == NULL)
        {
          if (n > 1)
            return fail (error, "%s: the archive holds %zu images: name one as "
                         "docker-archive:FILE:REPO:TAG", what, n);
          *chosen = entry;
          break;
        }
      cleanup_strv char **tags = NULL;
      if (get_strv (entry, "RepoTags", what, &tags, error) < 0)
        return -1;
      for (size_t k = 0; tags != NULL && tags[k] != NULL; k++)
        if (strcmp (short_repo_tag (tags[k]), short_repo_tag (repo_tag)) == 0)
          *chosen = entry;
    }
  return 0;
}

int
oci_try_archive_manifest_parse (const char *text, size_t len, const char *what,
                                const char *repo_tag, char **config, char ***layers,
                                char **error)
{
  cleanup_json json_t *root = NULL;
  if (load_json (text, len, what, &root, error) < 0)
    return -1;
  if (!json_is_array (root) || json_array_size (root) == 0)
    return fail (error, "%s: not a non-empty array of images", what);
  json_t *chosen;
  if (archive_choose (root, json_array_size (root), what, repo_tag, &chosen, error) < 0)
    return -1;
  if (chosen == NULL)
    return fail (error, "%s: no image tagged '%s'", what, repo_tag);
  const char *c;
  if (get_string (chosen, "Config", what, &c, error) < 0)
    return -1;
  if (c == NULL)
    return fail (error, "%s: the image has no Config", what);
  if (get_strv (chosen, "Layers", what, layers, error) < 0)
    return -1;
  if (*layers == NULL)
    return fail (error, "%s: the image has no Layers", what);
  *config = xstrdup (c);
  return 0;
}

void
oci_archive_manifest_parse (const char *text, size_t len, const char *what,
                            const char *repo_tag, char **config, char ***layers)
{
  char *error = NULL;
  die_on_error (oci_try_archive_manifest_parse (text, len, what, repo_tag, config, layers,
                                                &error), &error);
}

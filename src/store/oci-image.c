/* The JSON documents of an OCI image, read with libjansson (oci-image.h). */
#include <jansson.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/util.h"
#include "store/oci-image.h"
#include "store/oci-ref.h"

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
  free (d->media_type);
  free (d->digest);
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
  free (p->os);
  free (p->arch);
  free (p->variant);
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

/* TEXT as JSON, or die() naming WHAT. */
static json_t *
load_json (const char *text, size_t len, const char *what)
{
  json_error_t err;
  /* JSON_REJECT_DUPLICATES: two values for one key are read differently by different
   * parsers (the registry's, ours), a known way to make a verified document say two things. */
  json_t *root = json_loadb (text, len, JSON_REJECT_DUPLICATES, &err);
  if (root == NULL)
    die ("%s: not valid JSON: %s (line %d)", what, err.text, err.line);
  return root;
}

/* TEXT as a JSON object, or die() naming WHAT. */
static json_t *
load_object (const char *text, size_t len, const char *what)
{
  json_t *root = load_json (text, len, what);
  if (!json_is_object (root))
    {
      json_decref (root);
      die ("%s: not a JSON object", what);
    }
  return root;
}

static void
cleanup_jsonp (json_t **p)
{
  json_decref (*p);
}
#define cleanup_json __attribute__((cleanup (cleanup_jsonp)))

/* The string member KEY of OBJ, or NULL when absent; die()s when it is not a string. */
static const char *
get_string (json_t *obj, const char *key, const char *what)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL || json_is_null (v))
    return NULL;
  if (!json_is_string (v))
    die ("%s: \"%s\" is not a string", what, key);
  return json_string_value (v);
}

static void
descriptor_parse (json_t *obj, const char *what, struct oci_descriptor *out)
{
  if (!json_is_object (obj))
    die ("%s: a descriptor is not an object", what);
  const char *digest = get_string (obj, "digest", what);
  json_t *size = json_object_get (obj, "size");
  if (digest == NULL || !oci_digest_is_valid (digest))
    die ("%s: a descriptor's digest is missing or not sha256:HEX", what);
  if (!json_is_integer (size) || json_integer_value (size) < 0)
    die ("%s: descriptor %s has no valid size", what, digest);
  const char *mt = get_string (obj, "mediaType", what);
  *out = (struct oci_descriptor) {
    .media_type = mt != NULL ? xstrdup (mt) : NULL,
    .digest = xstrdup (digest),
    .size = (uint64_t) json_integer_value (size),
  };
}

enum oci_document_kind
oci_document_kind (const char *text, size_t len, const char *media_type, const char *what)
{
  cleanup_json json_t *root = load_object (text, len, what);
  const char *mt = get_string (root, "mediaType", what);
  if (mt == NULL)
    mt = media_type;
  if (mt != NULL && (strcmp (mt, MT_OCI_INDEX) == 0 || strcmp (mt, MT_DOCKER_LIST) == 0))
    return OCI_DOC_INDEX;
  if (mt != NULL && (strcmp (mt, MT_OCI_MANIFEST) == 0 || strcmp (mt, MT_DOCKER_MANIFEST) == 0))
    return OCI_DOC_MANIFEST;
  if (json_is_array (json_object_get (root, "manifests")))
    return OCI_DOC_INDEX;
  if (json_is_array (json_object_get (root, "layers")))
    return OCI_DOC_MANIFEST;
  die ("%s: neither an image index nor an image manifest%s%s", what,
       mt != NULL ? ": media type " : "", mt != NULL ? mt : "");
}

static bool
platform_matches (json_t *entry, const struct oci_platform *want, const char *what)
{
  json_t *p = json_object_get (entry, "platform");
  if (!json_is_object (p))
    return false;
  const char *os = get_string (p, "os", what);
  const char *arch = get_string (p, "architecture", what);
  const char *variant = get_string (p, "variant", what);
  if (os == NULL || arch == NULL || strcmp (os, want->os) != 0 || strcmp (arch, want->arch) != 0)
    return false;
  return want->variant == NULL || (variant != NULL && strcmp (variant, want->variant) == 0);
}

void
oci_layout_require_tag (const char *text, size_t len, const char *what)
{
  cleanup_json json_t *root = load_object (text, len, what);
  json_t *list = json_object_get (root, "manifests");
  if (!json_is_array (list))
    die ("%s: \"manifests\" is not an array", what);
  struct strbuf tags = { 0 };
  const char *first = NULL;
  bool several_tags = false, platforms = false;
  size_t n = json_array_size (list);
  for (size_t i = 0; i < n; i++)
    {
      json_t *entry = json_array_get (list, i);
      json_t *ann = json_object_get (entry, "annotations");
      const char *name = json_is_object (ann) ? get_string (ann, REF_NAME_ANNOTATION, what)
                                              : NULL;
      platforms |= json_object_get (entry, "platform") != NULL;
      if (name == NULL)
        continue;
      several_tags |= first != NULL && strcmp (first, name) != 0;
      if (first == NULL)
        first = name;
      strbuf_append (&tags, tags.len > 0 ? ", " : "");
      strbuf_append (&tags, name);
    }
  /* Several images, unless the entries are the platforms of one (a flat multi-arch index). */
  if (several_tags || (n > 1 && !platforms))
    die ("%s: the layout holds %zu images: name one with oci:DIR:TAG (%s%s)", what, n,
         tags.len > 0 ? "tags: " : "none is tagged: save each with a tag",
         tags.len > 0 ? tags.str : "");
  free (tags.str);
}

void
oci_index_select (const char *text, size_t len, const char *what, const char *tag,
                  const struct oci_platform *platform, struct oci_descriptor *out)
{
  cleanup_json json_t *root = load_object (text, len, what);
  json_t *list = json_object_get (root, "manifests");
  if (!json_is_array (list))
    die ("%s: \"manifests\" is not an array", what);
  size_t n = json_array_size (list);
  json_t *chosen = NULL;
  for (size_t i = 0; i < n && chosen == NULL; i++)
    {
      json_t *entry = json_array_get (list, i);
      if (!json_is_object (entry))
        die ("%s: a manifest entry is not an object", what);
      if (tag != NULL)
        {
          json_t *ann = json_object_get (entry, "annotations");
          const char *name = json_is_object (ann) ? get_string (ann, REF_NAME_ANNOTATION, what)
                                                  : NULL;
          if (name != NULL && strcmp (name, tag) == 0)
            chosen = entry;
        }
      else if (platform_matches (entry, platform, what)
               || (n == 1 && json_object_get (entry, "platform") == NULL))
        chosen = entry;
    }
  if (chosen == NULL && tag != NULL)
    die ("%s: no image tagged '%s'", what, tag);
  if (chosen == NULL)
    {
      cleanup_free char *want = oci_platform_string (platform);
      die ("%s: no image for platform %s (choose another with --platform)", what, want);
    }
  descriptor_parse (chosen, what, out);
}

static bool
is_layer_type (const char *mt)
{
  for (size_t i = 0; i < N_ELEMENTS (layer_types); i++)
    if (strcmp (mt, layer_types[i]) == 0)
      return true;
  return false;
}

void
oci_manifest_parse (const char *text, size_t len, const char *what, struct oci_manifest *out)
{
  cleanup_json json_t *root = load_object (text, len, what);
  json_t *version = json_object_get (root, "schemaVersion");
  if (!json_is_integer (version) || json_integer_value (version) != 2)
    die ("%s: schemaVersion is not 2 (schema 1 manifests are not supported)", what);
  json_t *layers = json_object_get (root, "layers");
  if (!json_is_array (layers))
    die ("%s: \"layers\" is not an array", what);
  struct oci_manifest m = { 0 };
  descriptor_parse (json_object_get (root, "config"), what, &m.config);
  m.n_layers = json_array_size (layers);
  m.layers = xcalloc (m.n_layers + 1, sizeof *m.layers);
  for (size_t i = 0; i < m.n_layers; i++)
    {
      descriptor_parse (json_array_get (layers, i), what, &m.layers[i]);
      const char *mt = m.layers[i].media_type;
      if (mt == NULL || !is_layer_type (mt))
        die ("%s: layer %s has media type %s, not a tar layer this tool can apply", what,
             m.layers[i].digest, mt != NULL ? mt : "(none)");
    }
  *out = m;
}

/* An array of strings (or null, or absent: NULL) as a NULL-terminated vector. */
static char **
get_strv (json_t *obj, const char *key, const char *what)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL || json_is_null (v))
    return NULL;
  if (!json_is_array (v))
    die ("%s: \"%s\" is not an array of strings", what, key);
  size_t n = json_array_size (v);
  char **out = xcalloc (n + 1, sizeof (char *));
  for (size_t i = 0; i < n; i++)
    {
      json_t *s = json_array_get (v, i);
      if (!json_is_string (s))
        {
          strv_free (out);
          die ("%s: \"%s\" is not an array of strings", what, key);
        }
      out[i] = xstrdup (json_string_value (s));
    }
  return out;
}

void
oci_config_parse (const char *text, size_t len, const char *what, struct meta_image *image,
                  char ***diff_ids)
{
  cleanup_json json_t *root = load_object (text, len, what);
  json_t *config = json_object_get (root, "config");
  if (config != NULL && !json_is_null (config) && !json_is_object (config))
    die ("%s: \"config\" is not an object", what);
  if (json_is_object (config))
    {
      image->env = get_strv (config, "Env", what);
      const char *wd = get_string (config, "WorkingDir", what);
      const char *user = get_string (config, "User", what);
      image->workdir = wd != NULL ? xstrdup (wd) : NULL;
      image->user = user != NULL ? xstrdup (user) : NULL;
      image->entrypoint = get_strv (config, "Entrypoint", what);
      image->cmd = get_strv (config, "Cmd", what);
    }
  if (diff_ids != NULL)
    {
      json_t *rootfs = json_object_get (root, "rootfs");
      if (!json_is_object (rootfs))
        die ("%s: \"rootfs\" is not an object", what);
      *diff_ids = get_strv (rootfs, "diff_ids", what);
      if (*diff_ids == NULL)
        die ("%s: rootfs.diff_ids is missing", what);
      for (size_t i = 0; (*diff_ids)[i] != NULL; i++)
        if (!oci_digest_is_valid ((*diff_ids)[i]))
          die ("%s: rootfs.diff_ids holds '%s', not sha256:HEX", what, (*diff_ids)[i]);
    }
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

void
oci_archive_manifest_parse (const char *text, size_t len, const char *what,
                            const char *repo_tag, char **config, char ***layers)
{
  cleanup_json json_t *root = load_json (text, len, what);
  if (!json_is_array (root) || json_array_size (root) == 0)
    die ("%s: not a non-empty array of images", what);
  size_t n = json_array_size (root);
  json_t *chosen = NULL;
  for (size_t i = 0; i < n && chosen == NULL; i++)
    {
      json_t *entry = json_array_get (root, i);
      if (!json_is_object (entry))
        die ("%s: an image entry is not an object", what);
      if (repo_tag == NULL)
        {
          if (n > 1)
            die ("%s: the archive holds %zu images: name one as docker-archive:FILE:REPO:TAG",
                 what, n);
          chosen = entry;
          break;
        }
      cleanup_strv char **tags = get_strv (entry, "RepoTags", what);
      for (size_t k = 0; tags != NULL && tags[k] != NULL; k++)
        if (strcmp (short_repo_tag (tags[k]), short_repo_tag (repo_tag)) == 0)
          chosen = entry;
    }
  if (chosen == NULL)
    die ("%s: no image tagged '%s'", what, repo_tag);
  const char *c = get_string (chosen, "Config", what);
  if (c == NULL)
    die ("%s: the image has no Config", what);
  *layers = get_strv (chosen, "Layers", what);
  if (*layers == NULL)
    die ("%s: the image has no Layers", what);
  *config = xstrdup (c);
}

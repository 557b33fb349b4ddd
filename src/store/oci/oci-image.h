/* The JSON documents of an OCI image (image-spec: index, manifest, config; and their
 * Docker v2 schema 2 twins), read with libjansson. All of it is untrusted: every document
 * is size-capped before parsing and checked against its digest by the caller, every field
 * is type-checked here, and anything unexpected is one error naming the document. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/meta.h"

/* A manifest, index or config larger than this is refused before it is read. */
#define OCI_DOCUMENT_MAX (4 * 1024 * 1024)
/* More layers than this is refused (each is an open file until the root is made; docker's
 * overlay storage stops at 128). */
#define OCI_MAX_LAYERS 1000

struct oci_descriptor
{
  char *media_type;
  char *digest;      /* "sha256:HEX", checked */
  uint64_t size;
};

struct oci_manifest
{
  struct oci_descriptor config;
  struct oci_descriptor *layers;
  size_t n_layers;
};

/* What the platform of an index entry must be: OS/ARCH[/VARIANT]. */
struct oci_platform
{
  char *os;
  char *arch;
  char *variant; /* NULL: any */
};

enum oci_document_kind
{
  OCI_DOC_INDEX,    /* an OCI index or a Docker manifest list */
  OCI_DOC_MANIFEST, /* an OCI or Docker v2 schema 2 image manifest */
};

void oci_descriptor_clear (struct oci_descriptor *d);
void oci_manifest_clear (struct oci_manifest *m);
void oci_platform_clear (struct oci_platform *p);

/* --platform's value, or NULL for linux and this machine's architecture. die()s on a
 * malformed value. */
void oci_platform_parse (const char *arg, struct oci_platform *out);
/* "linux/amd64" and so on, for messages. */
char *oci_platform_string (const struct oci_platform *p);

/* Whether TEXT (LEN bytes, from WHAT) is an index or a manifest: its mediaType, else
 * MEDIA_TYPE (from the descriptor or Content-Type that led to it; may be NULL), else its
 * shape. die()s naming WHAT when it is neither, or not JSON. */
enum oci_document_kind oci_document_kind (const char *text, size_t len, const char *media_type,
                                          const char *what);

/* The entry of index TEXT to use: the one whose annotation org.opencontainers.image.ref.name
 * is TAG when TAG is not NULL (an OCI layout's index.json), else the one for PLATFORM (a
 * single entry without a platform is taken as it is). die()s naming WHAT and the platform
 * when none matches. */
void oci_index_select (const char *text, size_t len, const char *what, const char *tag,
                       const struct oci_platform *platform, struct oci_descriptor *out);

/* For oci:DIR without a tag: die()s naming WHAT when the layout's index TEXT holds several
 * images (entries with different tags, or several entries none of which names a platform),
 * which no platform can tell apart; the message lists the tags. A layout of one image, or
 * of the platforms of one, passes. */
void oci_layout_require_tag (const char *text, size_t len, const char *what);

/* Parse manifest TEXT: its config and layer descriptors, with the media types this tool
 * can apply (tar, tar+gzip, tar+zstd; non-distributable and foreign layers are refused). */
void oci_manifest_parse (const char *text, size_t len, const char *what, struct oci_manifest *out);

/* The fields of config TEXT that entering the root uses (Env, WorkingDir, User, Entrypoint,
 * Cmd) into IMAGE; with DIFF_IDS not NULL, also rootfs.diff_ids (the uncompressed layers'
 * digests, a docker save archive's only ones). */
void oci_config_parse (const char *text, size_t len, const char *what, struct meta_image *image,
                       char ***diff_ids);

/* docker save's manifest.json: the entry whose RepoTags holds REPO_TAG (or the only entry
 * when REPO_TAG is NULL): its Config and Layers paths inside the archive. */
void oci_archive_manifest_parse (const char *text, size_t len, const char *what,
                                 const char *repo_tag, char **config, char ***layers);

/* The same readers returning -1 with *ERROR (the one-line message the ones above die()
 * with; caller frees) instead of ending the process, having freed what they allocated:
 * for the fuzzer (fuzz/fuzz-oci.c), which must go on to the next input. */
int oci_try_document_kind (const char *text, size_t len, const char *media_type,
                           const char *what, enum oci_document_kind *kind, char **error);
int oci_try_index_select (const char *text, size_t len, const char *what, const char *tag,
                          const struct oci_platform *platform, struct oci_descriptor *out,
                          char **error);
int oci_try_manifest_parse (const char *text, size_t len, const char *what,
                            struct oci_manifest *out, char **error);
int oci_try_config_parse (const char *text, size_t len, const char *what,
                          struct meta_image *image, char ***diff_ids, char **error);
int oci_try_archive_manifest_parse (const char *text, size_t len, const char *what,
                                    const char *repo_tag, char **config, char ***layers,
                                    char **error);

/* A devroot's metadata, kept beside the root (never inside it) as a small JSON file, and
 * the JSON text `list --json` prints. */
#pragma once

#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "common/util.h"

/* The host files enter copies into a root in chroot mode (src/enter/hostfiles.c). */
enum meta_copy
{
  META_COPY_RESOLV_CONF,
  META_COPY_HOSTS,
  META_N_COPIES,
};

/* What `enter`/`run` take from an OCI image's config (NULL when the root did not come from
 * one, or the config left the field out). Vectors are NULL-terminated. */
/* Where an exported OCI-made root carries its image's config, inside the archive
 * (store/oci/image-config.h). */
#define IMAGE_CONFIG_DIR ".enter-devroot"
#define IMAGE_CONFIG_PATH IMAGE_CONFIG_DIR "/image-config.json"

struct meta_image
{
  char *ref;         /* the image reference as given: docker://..., oci:..., docker-archive:... */
  char *digest;      /* its manifest's digest, "sha256:HEX" */
  char **env;        /* Env: "K=V" */
  char *workdir;     /* WorkingDir */
  char *user;        /* User: recorded, not applied (you stay yourself) */
  char **entrypoint; /* Entrypoint */
  char **cmd;        /* Cmd */
  char *transport;   /* "http": pulled from a plain-http registry (--insecure-http), which a
                      * push reading the image again must use; NULL: https (or not a registry) */
};

struct meta
{
  char *name;
  char *source;     /* what it was created from: a file path, later a URL or template */
  char *sha256;     /* 64 lowercase hex digits of the bytes read */
  char *created;    /* RFC 3339, UTC */
  uint64_t size_bytes; /* bytes of regular-file data unpacked */
  /* The copy of the host's file last written into the root ("inode:size:ctime"), so that
   * the next enter refreshes it only while nobody edited it; NULL when none was made. */
  char *host_copies[META_N_COPIES];
  struct meta_image image;
  /* The layers of the layer store it was made of ("sha256:HEX", the diff_ids), bottom
   * first (store/layers/layers.h): `cache list` names the roots using a layer, `cache clean`
   * keeps it. NULL for a root made before the layer store. */
  char **layers;
  /* "overlay": the root is an overlay of those layers and an upper of its own, mounted at
   * each entering (common/overlay.h); NULL: a plain directory tree. */
  char *layout;
};

void meta_clear (struct meta *m);

/* The image root M was made from, which a push builds on (its layers, its config): its
 * image when that is its source, as create records an image it read (docker://, oci:,
 * docker-archive:); NULL for any other root, whatever image its metadata names (a root
 * made from an archive by an older version recorded the image its carried config claimed:
 * store/oci/image-config.h). */
const char *meta_base_image (const struct meta *m);

/* What identifies a host file's copy in a root (host_copies): a user's edit changes the
 * ctime (and an editor's save usually the inode). */
char *meta_copy_stamp (const struct stat *st);

/* "2026-01-31T12:00:00Z" */
char *format_rfc3339_utc (time_t t);

/* Append S as a JSON string literal (quotes included). Control characters are escaped;
 * bytes that are not valid UTF-8 become U+FFFD, so the output is always valid JSON. */
void json_append_string (struct strbuf *sb, const char *s);

/* One JSON object; PATH, when not NULL, is added as "path". */
void meta_append_json (struct strbuf *sb, const struct meta *m, const char *path);

/* Parse what meta_append_json wrote (any JSON object of strings, integers and arrays of
 * strings; unknown keys are ignored). 0 on success, -1 with *error set to a static message. */
int meta_parse_json (const char *text, struct meta *out, const char **error);

/* Write atomically (temporary file + rename) / read; die()/-1 on failure. */
void meta_write (const char *path, const struct meta *m);
int meta_read (const char *path, struct meta *out);

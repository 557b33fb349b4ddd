/* Where an image's manifests and blobs come from: an OCI layout directory (oci.c), a
 * registry (registry.c). oci.c walks from the first manifest to the layers through this. */
#pragma once

#include <stddef.h>

#include "store/oci/oci-image.h"
#include "store/oci/oci-ref.h"
#include "store/oci/oci.h"
#include "store/source.h"

struct image_source
{
  const char *what; /* the reference as given, for messages */
  /* Blob D (a config; at most OCI_DOCUMENT_MAX bytes), read and verified against D's
   * digest and size; NUL-terminated, *LEN its length. die()s. */
  char *(*read_document) (struct image_source *s, const struct oci_descriptor *d, size_t *len);
  /* The same for a manifest or index an index names (a registry serves those apart). */
  char *(*read_manifest) (struct image_source *s, const struct oci_descriptor *d, size_t *len);
  /* Blob D (a layer) as a source whose digest the extractor checks while it streams. */
  void (*open_blob) (struct image_source *s, const struct oci_descriptor *d, struct source *src);
  void *data;
};

/* The registry behind a docker:// reference: connects lazily. registry_first_manifest
 * fetches the manifest (or index) the tag or digest names, verifies it against a digest
 * reference and returns its text, digest and media type. */
void registry_open (struct image_source *s, const struct oci_ref *ref, const struct oci_opts *o);
char *registry_first_manifest (struct image_source *s, const struct oci_ref *ref, size_t *len,
                               char **digest, char **media_type);
void registry_close (struct image_source *s);

/* push's base when create read it from oci:DIR or docker-archive:FILE (REF): S (its `what`
 * set) reads it again there by DIGEST, what the root's metadata recorded (the manifest's, a
 * docker save image's config's); returns the manifest's text (a docker save image's as the
 * Docker schema 2 manifest of its plain tar layers, whose digests are its diff_ids).
 * die()s when the image is not there any more. oci_local_base_close frees S's data. */
char *oci_local_base_open (struct image_source *s, const struct oci_ref *ref,
                           const char *digest, size_t *len);
void oci_local_base_close (struct image_source *s);

/* The layers of manifest M from S, whose config's diff_ids are DIFF_IDS (one each), in the
 * caller's layer store (layers.h), each held until this process exits; their hex digests
 * into HEXES, bottom first. One already there is not read at all; one that is not is read
 * from BLOBS[i] when open (fd >= 0), else opened from S, and unpacked (its diff_id checked).
 * The caller's die() cleanup calls layers_cleanup. */
void oci_layers_ensure (struct image_source *s, const struct oci_manifest *m, char **diff_ids,
                        struct source *blobs, const struct extract_opts *xopts,
                        char (*hexes)[SHA256_HEX_LEN + 1]);

/* "sha256:HEX" of LEN bytes at DATA; and a die() naming WHAT unless DATA has DIGEST. */
char *oci_digest_of (const void *data, size_t len);
void oci_check_digest (const char *what, const char *digest, const void *data, size_t len);

/* Reading a blob file whose size and digest must match D, capped to OCI_DOCUMENT_MAX;
 * WHAT names it in messages. Shared by the layout and the registry's cache. */
char *oci_read_document_fd (int fd, const struct oci_descriptor *d, const char *what,
                            size_t *len);

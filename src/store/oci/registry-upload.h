/* Uploading an image to a registry (distribution's HTTP API v2), for push.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/oci/oci-ref.h"
#include "store/oci/oci.h"

struct upload;

/* A session pushing to DEST (a docker:// reference with a tag); FROM_REPO, when not NULL,
 * is a repository of the same registry holding the base image's blobs (cross-repository
 * mount). WHAT begins every error line. */
struct upload *upload_open (const struct oci_ref *dest, const char *from_repo,
                            const struct oci_opts *o, const char *what);
void upload_close (struct upload *u);
/* Contact the registry as a push will, before anything is built: an upload session opened
 * (its credentials and the push scope answered) and given back. dies with one line when the
 * registry cannot be reached, speaks plain http, or refuses the push. */
void upload_check (struct upload *u);

/* A blob's bytes, when they must be sent: FD at OFFSET, or DATA when FD < 0; when OPEN is
 * set, OPEN (BODY) sets FD and OFFSET first, called only then (a base layer's blob is not
 * even opened when the registry has it or mounts it). */
struct upload_body
{
  int fd;
  off_t offset;
  const char *data;
  void (*open) (struct upload_body *body);
  void *ctx;
};

/* Make blob DIGEST (SIZE bytes) exist in the destination repository: nothing when the
 * registry has it (HEAD), a mount from FROM_REPO when FROM_BASE and it can, else an upload
 * of SIZE bytes of BODY. Returns true when bytes were sent. dies with one line on a refusal
 * (401, 403, 404, 413, anything unexpected). */
bool upload_blob (struct upload *u, const char *digest, uint64_t size, struct upload_body *body,
                  const char *label, bool from_base);

/* PUT the manifest TEXT (media type MEDIA_TYPE) under the destination's tag: last, so
 * nothing is tagged until every blob is there. */
void upload_manifest (struct upload *u, const char *media_type, const char *text, size_t len);

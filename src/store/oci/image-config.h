/* An OCI-made root's image config, carried through export and publish in the archive
 * itself (image-config.c). */
#pragma once

#include <stdbool.h>

#include "common/meta.h"


/* IMAGE (a root's metadata) as an OCI image config's JSON text, or NULL when the root was
 * not made from an image. */
char *image_config_json (const struct meta_image *image);

/* After a create unpacked an archive into ROOTFD: the config it carries, into IMAGE (which
 * must be empty): its fields, and as digest the config's own SHA-256; IMAGE->ref stays
 * NULL, whatever image the config's labels name (the archive's author wrote them). False
 * when it carries none. die()s naming ORIGIN when the config is malformed, larger than an
 * OCI config may be, or not a regular file. */
bool image_config_read (int rootfd, const char *origin, struct meta_image *image);

/* Take the carried config out of the root, once its metadata holds it. */
void image_config_remove (int rootfd);

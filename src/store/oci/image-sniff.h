/* An image given as a plain path: `create --from ./saved.tar` of what `docker save` or
 * `podman save` wrote, or `--from DIR` of an OCI image layout, is the image it holds, as
 * podman load, enroot import and ch-image import take it, not a root filesystem whose
 * files are manifest.json and blobs/. */
#pragma once

enum image_shape
{
  IMAGE_SHAPE_NONE,          /* a root filesystem (or not readable as an archive here) */
  IMAGE_SHAPE_DOCKER_ARCHIVE, /* docker save / podman save: manifest.json at the top */
  IMAGE_SHAPE_OCI_ARCHIVE,   /* a tar of an OCI image layout (oci-layout, index.json) */
  IMAGE_SHAPE_OCI_LAYOUT,    /* a directory holding an OCI image layout */
};

/* What PATH (a local file or directory) holds. An archive's top-level names are read until
 * one that no image archive has (a root's bin/, etc/, ./): a root filesystem's archive is
 * told after its first entries, an image's after its headers (a plain tar's are seeked
 * over, not read). */
enum image_shape image_shape_of (const char *path);

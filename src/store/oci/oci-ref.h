/* OCI image references as `create --from` takes them:
 *
 *   docker://[REGISTRY[:PORT]/]REPO[:TAG|@sha256:HEX]   a registry (API v2)
 *   oci:DIR[:TAG]                                       an OCI image layout
 *   docker-archive:FILE[:REPO:TAG]                      what `docker save` writes
 *
 * A docker:// reference without a registry means Docker Hub (registry-1.docker.io), and a
 * one-part REPO there means library/REPO, as docker, podman and skopeo read it. */
#pragma once

#include <stdbool.h>

#define DOCKER_HUB_REGISTRY "registry-1.docker.io"
#define DEFAULT_TAG "latest"

enum oci_ref_kind
{
  OCI_REF_DOCKER,
  OCI_REF_LAYOUT,
  OCI_REF_ARCHIVE,
};

struct oci_ref
{
  enum oci_ref_kind kind;
  char *registry;   /* docker: HOST[:PORT] */
  char *repository; /* docker: library/debian */
  char *tag;        /* docker, oci: the tag, or NULL (docker: with a digest);
                     * docker-archive: "REPO:TAG" as RepoTags spells it, or NULL */
  char *digest;     /* docker: "sha256:HEX", or NULL */
  char *path;       /* oci: DIR; docker-archive: FILE */
};

/* True when ARG starts with one of the three prefixes above. */
bool oci_ref_is_image (const char *arg);
/* Parse ARG into OUT: 0, or -1 with *WHY (static). */
int oci_ref_parse (const char *arg, struct oci_ref *out, const char **why);
void oci_ref_clear (struct oci_ref *r);
/* What a root's metadata records of ARG (REF, parsed from it): oci:DIR and
 * docker-archive:FILE with DIR or FILE made absolute, so that `images` and `list` say where
 * the image was whatever directory the create ran in (a path that does not resolve is
 * kept: opening it fails anyway). Owned. */
char *oci_ref_recorded (const char *arg, const struct oci_ref *ref);
/* True when S is "sha256:" and 64 lowercase hexadecimal digits. */
bool oci_digest_is_valid (const char *s);

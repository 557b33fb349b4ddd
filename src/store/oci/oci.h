/* OCI images as devroots: `create NAME --from docker://...|oci:...|docker-archive:...`.
 * The reference is resolved to one image manifest (an index is narrowed to the platform
 * asked for), its config and layers are read and verified against their digests, and the
 * layers are applied in order into a new root (extract.h's whiteout rules); the config's
 * Env, WorkingDir, User, Entrypoint and Cmd go into the root's metadata for enter and run. */
#pragma once

#include <stdbool.h>

#include "store/extract/extract.h"

struct oci_opts
{
  const char *platform; /* OS/ARCH[/VARIANT]; NULL: linux and this machine's architecture */
  const char *cacert;   /* docker://: trust the CAs in this file (else $CURL_CA_BUNDLE, the
                         * system's) */
  bool insecure_http;   /* docker://: plain http to the registry allowed */
  bool quiet;           /* no progress output */
  const char *hub_mirror; /* docker:// on Docker Hub: pull from this registry instead
                           * (https://HOST[:PORT], as Docker's registry-mirrors), or NULL */
};

/* Create devroot NAME from the image REF (oci-ref.h's forms). One entry point for every
 * caller (create --from, a catalogue entry naming a docker:// reference). die()s with one
 * line naming what is at fault; then nothing is created and the cache holds only verified
 * blobs (and resumable partial downloads). */
void oci_create (const char *name, const char *ref, const struct oci_opts *o,
                 const struct extract_opts *xopts);

/* `fetch --from docker://...`: everything a create of REF needs (the index and manifest,
 * the config, every layer) into the download cache, verified; print the reference pinned
 * to the digest of what the tag names (docker://REGISTRY/REPO@sha256:HEX), which a create
 * then makes without asking the registry anything. */
void oci_pull (const char *ref, const struct oci_opts *o);

/* One CDI spec file, read and checked against the CDI specification (SPEC.md of
 * cncf-tags/container-device-interface, versions 0.3.0 to 1.1.0) as its Go library checks
 * it: every field known (unknown ones refused, names matched without regard to case as Go's
 * encoding/json matches them), required ones present, each of its type, names and paths
 * well formed, and the cdiVersion at least what the fields used need. The text is untrusted
 * whoever wrote the file: nothing here trusts a length, a depth or a count it was given. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Spec files larger than this are refused unread (a spec for eight GPUs is some 30 KB). */
#define CDI_SPEC_MAX_BYTES (4u * 1024 * 1024)

struct cdi_spec_node
{
  char *path;      /* inside the root: absolute, no ".." */
  char *host_path; /* NULL: the same as PATH */
  char *type;      /* "", "c", "u", "b" or "p" */
  int64_t major, minor; /* 0 major: not given */
};

struct cdi_spec_mount
{
  char *host_path;
  char *container_path;
  char *type;      /* NULL when not given */
  char **options;  /* NULL-terminated */
};

struct cdi_spec_hook
{
  char *name; /* prestart, createRuntime, createContainer, startContainer, poststart, poststop */
  char *path;
  char **args;
  char **env;
  unsigned timeout; /* 0: not given */
};

/* A containerEdits object. WHERE is its field path for messages ("containerEdits",
 * "devices[2].containerEdits"); the fields enter-devroot cannot apply are kept as where
 * they were seen, so that a message names them. */
struct cdi_spec_edits
{
  char *where;
  char **env;
  struct cdi_spec_node *nodes;
  size_t n_nodes;
  struct cdi_spec_mount *mounts;
  size_t n_mounts;
  struct cdi_spec_hook *hooks;
  size_t n_hooks;
  char *unsupported; /* the first of additionalGids (a gid not 0), intelRdt, netDevices
                      * given, as a field path; NULL when none is */
  bool others;       /* any of these given at all (a gid of 0 included): not empty edits */
};

struct cdi_spec_device
{
  char *name;
  struct cdi_spec_edits edits;
};

struct cdi_spec
{
  char *version; /* as written ("0.5.0", "v0.5.0") */
  char *vendor;  /* the kind, VENDOR/CLASS */
  char *class;
  struct cdi_spec_device *devices;
  size_t n_devices;
  struct cdi_spec_edits edits; /* applied when any of its devices is */
};

/* TEXT (LEN bytes; YAML when IS_YAML, else JSON) into *OUT (cdi_spec_clear it whatever this
 * returns): 0, or -1 with a malloc'd one-line *ERROR, "FIELD: what is wrong" (the field as
 * a path: devices[0].containerEdits.mounts[1].hostPath), or where the text is not JSON or
 * YAML, what its parser said and where. */
int cdi_spec_parse (const char *text, size_t len, bool is_yaml, struct cdi_spec *out,
                    char **error);
void cdi_spec_clear (struct cdi_spec *s);

/* Where CDI specs are read from, and the devices they define, as the CDI's Go library keeps
 * them (pkg/cdi/cache.go, spec-dirs.go): every *.json and *.yaml file of each directory, in
 * name order, the directories in order of priority, the later the higher. A device defined
 * in two directories is the higher one's; in two files of one directory, neither's (a
 * conflict, said when it is asked for). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cdi/spec.h"

/* The directories when none are configured (SPEC.md: the static, then the dynamic one). */
#define CDI_DEFAULT_SPEC_DIRS "/etc/cdi:/var/run/cdi"
/* The config file's key (paths.h) that replaces them, as podman's cdi_spec_dirs does: a
 * list of absolute directories separated by ':'. */
#define CDI_SPEC_DIRS_KEY "cdi-spec-dirs"
/* The most spec files read from one directory. */
#define CDI_SPEC_FILES_MAX 1024

struct spec_file
{
  char *path;
  int priority;
  struct cdi_spec spec;
};

/* One fully qualified device, VENDOR/CLASS=NAME, and where it is defined. */
struct device_entry
{
  char *qualified;
  struct spec_file *file;
  struct cdi_spec_device *device;
  struct spec_file *conflict; /* another file of the same priority defining it, or NULL */
};

struct spec_set
{
  char **dirs; /* NULL-terminated */
  struct spec_file **files;
  size_t n_files;
  struct device_entry *devices;
  size_t n_devices;
};

/* The directories (the config file's CDI_SPEC_DIRS_KEY, else CDI_DEFAULT_SPEC_DIRS), every
 * spec in them read and checked (spec.h), and their devices. die()s with one line naming
 * the file and the field for a spec that cannot be read or is not a valid spec: a broken
 * spec of a higher directory skipped would hand out a lower one's device in its place. A
 * missing directory is no error. */
void spec_set_load (struct spec_set *set);
void spec_set_clear (struct spec_set *set);

/* The entry for VENDOR/CLASS=NAME, or NULL. */
const struct device_entry *spec_set_find (const struct spec_set *set, const char *qualified);
/* The directories as one "A, B" string, for messages. */
char *spec_set_dirs_text (const struct spec_set *set);

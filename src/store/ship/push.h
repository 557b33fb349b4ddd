/* push NAME docker://... | oci:... | docker-archive:...: a devroot as an image (push.c). */
#pragma once

#include <stdbool.h>

struct push_opts
{
  const char *cacert;
  bool insecure_http;
  bool quiet;
};

/* Push devroot NAME to DEST. dies (exit 125) with one line naming what failed; the tag is
 * then untouched (the manifest goes last). */
void push_root (const char *name, const char *dest, const struct push_opts *o);

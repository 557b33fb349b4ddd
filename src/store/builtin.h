/* The built-in template catalogue: templates that work on a fresh machine with nothing
 * configured (builtin.c). */
#pragma once

#include <stdbool.h>

#include "common/util.h"

struct builtin_template
{
  const char *name;
  const char *image;       /* a docker:// reference (oci.h), or NULL: the embedded default */
  const char *description;
};

/* The built-in template NAME, or NULL. */
const struct builtin_template *builtin_find (const char *name);

/* Append the built-in templates to a `templates` listing: table rows in the same columns,
 * or JSON objects (*FIRST: none written yet; cleared once one is). */
void builtin_list (struct strbuf *sb, bool json, bool *first);

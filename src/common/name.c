/* Devroot names: [A-Za-z0-9][A-Za-z0-9._-]{0,63}.
 * The first character being alphanumeric is what keeps ".", ".." and hidden names out:
 * a name is used as a single path component under roots/, meta/ and locks/. */
#include <string.h>

#include "common/name.h"
#include "common/util.h"

static bool
is_alnum_ascii (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool
name_is_valid (const char *name)
{
  if (name == NULL || !is_alnum_ascii (name[0]))
    return false;
  size_t len = strlen (name);
  if (len > NAME_MAX_LEN)
    return false;
  for (size_t i = 1; i < len; i++)
    if (!is_alnum_ascii (name[i]) && name[i] != '.' && name[i] != '_' && name[i] != '-')
      return false;
  return true;
}

void
name_check (const char *name)
{
  if (!name_is_valid (name))
    die ("invalid name '%s': must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}", name);
}

/* Devroot names: [A-Za-z0-9][A-Za-z0-9._-]{0,63}. */
#pragma once

#include <stdbool.h>

#define NAME_MAX_LEN 64

/* True when NAME matches the pattern; a leading letter or digit rules out "." and "..". */
bool name_is_valid (const char *name);
/* die() with a message saying why NAME is refused. */
void name_check (const char *name);

/* publish DIR ARCHIVE...: exported roots into a directory a web server can serve as a
 * template catalogue (see publish.c). */
#pragma once

#include <stdbool.h>

/* Hard-link or copy each of ARCHIVES (NULL-terminated) into DIR (created if missing) and
 * add or replace its entry in DIR/index, with DESCRIPTION when not NULL. One line per
 * archive on stdout unless QUIET. Dies (exit 125) on the first problem; a bad archive name
 * stops it before anything is written. */
void publish (const char *dir, char *const *archives, const char *description, bool quiet);

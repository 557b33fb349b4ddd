/* create of an overlay root from a recorded image, by enter-devroot itself (create.c). */
#pragma once

#include <stdbool.h>

#include "common/cli.h"

/* When CLI's source has a current record (resolved.h), overlay roots are made here, and
 * the record's layers are in the store and need nothing but the account written into a new
 * upper: create root CLI->name of them and return true. Else false, with nothing made: the
 * store helper creates it. die()s as the helper would on a bad or taken name. */
bool create_from_record (const struct cli *cli);

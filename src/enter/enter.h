/* Entering a devroot: the in-process sequence from "a path" to "exec inside it". */
#pragma once

#include "common/cli.h"

/* enter or run (CLI's NAME, or a throwaway root with run --ephemeral): run the command
 * inside the root and exit as it did: its exit status or its signal, 124 when --timeout
 * stopped it, 125 when setting up failed, 126 or 127 (see run's exit status). */
__attribute__((noreturn)) void enter_devroot (const struct cli *cli);

/* export and push of an overlay root NAME, before the store helper is executed: join the
 * root's holder (its one overlay mount, started if need be), so that the helper reads that
 * mount rather than mounting a second overlay of the same upper. Nothing for any other root,
 * or where nothing can be shared (the helper then mounts its own). */
void enter_join_overlay_holder (const char *name);

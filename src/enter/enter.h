/* Entering a devroot: the in-process sequence from "a path" to "exec inside it". */
#pragma once

#include "common/cli.h"

/* enter or run (CLI's NAME, or a throwaway root with run --ephemeral): run the command
 * inside the root and exit as it did: its exit status or its signal, 124 when --timeout
 * stopped it, 125 when setting up failed, 126 or 127 (see run's exit status). */
__attribute__((noreturn)) void enter_devroot (const struct cli *cli);


/* The subcommands' table, which cli-help.c holds and cli.c parses against. */
#pragma once

#include <stdbool.h>

#include "common/cli.h"

struct command_info
{
  const char *name;
  enum command command;
  bool takes_name;
  const char *usage;
  const char *help;
};

/* The subcommand NAME, or NULL when there is none. */
const struct command_info *cli_find_command (const char *name);

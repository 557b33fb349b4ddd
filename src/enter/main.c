/* enter-devroot: unpack root filesystems under your home and enter them without privileges.
 * This file only dispatches; each subcommand lives in the file named for its concern. It
 * links the C library only: create, templates, fetch, cache, export and publish run in
 * enter-devroot-store (helper.h), so entering a root does not load libarchive, libcurl
 * and libcrypto. */
#include <stdio.h>
#include <stdlib.h>

#include "common/cli.h"
#include "common/helper.h"
#include "common/roots.h"
#include "common/util.h"
#include "enter/create.h"
#include "enter/doctor.h"
#include "enter/enter.h"
#include "enter/share.h"

int
main (int argc, char **argv)
{
  refuse_if_privileged_exec ();
  struct cli cli;
  cli_parse (argc, argv, &cli);

  switch (cli.command)
    {
    case CMD_CREATE:
      if (create_from_record (&cli))
        break;
      cli_clear (&cli);
      exec_store_helper (argv);
    case CMD_EXPORT:
    case CMD_PUSH:
      enter_join_overlay_holder (cli.name);
      cli_clear (&cli);
      exec_store_helper (argv);
    case CMD_TEMPLATES:
    case CMD_FETCH:
    case CMD_CACHE:
    case CMD_PUBLISH:
    case CMD_GITLAB:
    case CMD_GITHUB_HOOK:
      cli_clear (&cli);
      exec_store_helper (argv);
    case CMD_ENTER:
    case CMD_RUN:
      enter_devroot (&cli);
    case CMD_LIST:
      roots_list (cli.json);
      break;
    case CMD_IMAGES:
      roots_list_images (cli.json);
      break;
    case CMD_PATH:
      {
        cleanup_free char *root = roots_existing_path (cli.name, "find");
        roots_refuse_overlay_path (cli.name);
        printf ("%s\n", root);
        break;
      }
    case CMD_REMOVE:
      roots_remove (cli.names, cli.force);
      break;
    case CMD_DOCTOR:
      return doctor_run ();
    case CMD_HELP:
      if (cli_print_help (cli.help_topic) < 0)
        die ("help: unknown subcommand '%s' (see '%s --help')", cli.help_topic, PROGRAM_NAME);
      break;
    case CMD_VERSION:
      printf ("%s %s\n", PROGRAM_NAME, PACKAGE_VERSION);
      break;
    }
  cli_clear (&cli);
  if (fflush (stdout) != 0 || ferror (stdout))
    die_with_error ("cannot write to standard output");
  return 0;
}

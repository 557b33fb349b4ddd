/* create of an overlay root from a recorded image, without the store helper (create.h).
 *
 * Why here: an overlay root of layers already in the store is a few directories, the
 * account's lines and a metadata file (issue 28: at most 20 ms for a 1 GiB image), while
 * the exec of enter-devroot-store alone, which loads libcurl, libarchive and libcrypto
 * with their 45 shared libraries, costs several times that. What the helper would have
 * read (the image layout's index, manifest and config, verified against their digests)
 * is the record it kept after an earlier create of the same source, still stamped with
 * the identity of the file that decides it (resolved.h); anything else goes to the
 * helper. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/helper.h"
#include "common/name.h"
#include "common/overlay.h"
#include "common/resolved.h"
#include "common/root-create.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/create.h"

bool
create_from_record (const struct cli *cli)
{
  cleanup_free char *key = resolved_key (cli);
  if (key == NULL)
    return false;
  name_check (cli->name);
  struct store_paths p;
  store_paths_from_env (&p);
  bool overlay = overlay_layout_wanted (&p, cli->layout, cli->name);
  store_paths_clear (&p);
  struct meta m;
  if (!overlay)
    return false;
  if (!resolved_read (key, cli->from != NULL ? cli->from : "the default template", &m))
    {
      verbose ("create: through %s", STORE_HELPER_NAME);
      return false;
    }
  /* Held against `cache clean` until this process exits (the root's metadata names them
   * by then); one gone: the helper unpacks it again. */
  for (char **l = m.layers; *l != NULL; l++)
    if (overlay_layer_hold (*l) < 0)
      {
        verbose ("create: layer %s is no longer in the layer store: through the helper", *l);
        meta_clear (&m);
        return false;
      }
  /* All or nothing, and quick: an interrupt waits (here there is nothing long to cut
   * short). */
  sigset_t set;
  block_interrupts (&set);
  struct creation c;
  creation_begin (&c, cli->name, NULL);
  m.name = xstrdup (cli->name);
  free (m.created);
  m.created = format_rfc3339_utc (time (NULL));
  bool made = creation_commit_overlay_direct (&c, &m, creation_nothing_to_finish, NULL);
  if (made)
    {
      verbose ("create: root '%s' of the recorded image's %zu layers, without the store helper",
               cli->name, strv_length (m.layers));
      creation_end (&c);
    }
  else
    creation_abort (&c);
  meta_clear (&m);
  /* The signals stay blocked: once the root is in place the create has succeeded whatever
   * comes (as the helper's does), and a fallback's exec passes one pending to the helper,
   * which acts on it (exec_store_helper). */
  if (made)
    creation_announce (cli->name, cli->quiet);
  return made;
}

/* The built-in template catalogue.
 *
 * `create NAME --template T` on a fresh machine needs no catalogue for these: "minimal" is
 * the embedded default, the others name an OCI image on Docker Hub, pulled with oci.c (its
 * manifest names the digest of every blob it is made of, so nothing here needs pinning;
 * registry-mirror in the config, or ENTER_DEVROOT_REGISTRY_MIRROR, sends the pulls to a
 * mirror). A configured catalogue's entry of the same name comes first (main.c). */
#include <string.h>

#include "common/meta.h"
#include "store/builtin.h"

static const struct builtin_template builtins[] = {
  { "minimal", NULL, "busybox only: a shell and the coreutils applets (embedded)" },
  { "debian-bookworm", "docker://debian:bookworm", "Debian 12 (Docker Hub's debian:bookworm)" },
  { "debian-bookworm-build", "docker://buildpack-deps:bookworm",
    "Debian 12 with gcc, make, git and common -dev packages (buildpack-deps:bookworm)" },
  { "gcc", "docker://gcc:13-bookworm", "C and C++: GCC 13 on Debian 12 (gcc:13-bookworm)" },
  { "python", "docker://python:3.12-slim-bookworm",
    "Python 3.12 on Debian 12 (python:3.12-slim-bookworm)" },
  { "rust", "docker://rust:1-slim-bookworm", "Rust, stable, on Debian 12 (rust:1-slim-bookworm)" },
  { "golang", "docker://golang:1.22-bookworm", "Go 1.22 on Debian 12 (golang:1.22-bookworm)" },
  { "node", "docker://node:20-bookworm-slim", "Node.js 20 on Debian 12 (node:20-bookworm-slim)" },
};

const struct builtin_template *
builtin_find (const char *name)
{
  for (size_t i = 0; i < N_ELEMENTS (builtins); i++)
    if (strcmp (builtins[i].name, name) == 0)
      return &builtins[i];
  return NULL;
}

void
builtin_list (struct strbuf *sb, bool json, bool *first)
{
  for (size_t i = 0; i < N_ELEMENTS (builtins); i++)
    {
      const struct builtin_template *b = &builtins[i];
      const char *url = b->image != NULL ? b->image : "embedded";
      if (!json)
        {
          strbuf_appendf (sb, "%-24s %10s  %-6s  %s\n", b->name, "-", "-", b->description);
          continue;
        }
      strbuf_append (sb, *first ? "\n  {\"name\": " : ",\n  {\"name\": ");
      *first = false;
      json_append_string (sb, b->name);
      strbuf_append (sb, ", \"url\": ");
      json_append_string (sb, url);
      strbuf_append (sb, ", \"sha256\": null, \"size_bytes\": null, \"description\": ");
      json_append_string (sb, b->description);
      strbuf_append (sb, ", \"cached\": false, \"builtin\": true}");
    }
}

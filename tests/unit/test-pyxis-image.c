/* pyxis_image_source: --container-image as pyxis and enroot read it
 * ([USER@][REGISTRY#]IMAGE[:TAG], Docker Hub without '#'; a path starting with / or ./ is a
 * file), written as what `create --from` takes. */
#include "unit.h"

#include <stdio.h>

#include "spank/image-name.h"

static const struct
{
  const char *value, *source, *user;
} good[] = {
  { "ubuntu:22.04", "docker://ubuntu:22.04", NULL },
  { "ubuntu", "docker://ubuntu", NULL },
  { "nvidia/cuda:12.4.1-base-ubuntu22.04", "docker://nvidia/cuda:12.4.1-base-ubuntu22.04", NULL },
  { "nvcr.io#nvidia/pytorch:24.05-py3", "docker://nvcr.io/nvidia/pytorch:24.05-py3", NULL },
  { "me@nvcr.io#nvidia/pytorch:24.05-py3", "docker://nvcr.io/nvidia/pytorch:24.05-py3", "me" },
  { "$oauthtoken@nvcr.io#nvidia/pytorch", "docker://nvcr.io/nvidia/pytorch", "$oauthtoken" },
  { "127.0.0.1:5000#team/tiny:a", "docker://127.0.0.1:5000/team/tiny:a", NULL },
  { "localhost#tiny", "docker://localhost/tiny", NULL },
  { "alpine@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "docker://alpine@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    NULL },
  { "/shared/images/pytorch.tar.gz", "/shared/images/pytorch.tar.gz", NULL },
  { "./ubuntu.tar", "./ubuntu.tar", NULL },
  { "../ubuntu.tar", "../ubuntu.tar", NULL },
  { "docker://127.0.0.1:5000/img:a", "docker://127.0.0.1:5000/img:a", NULL },
  { "oci:/images/layout:a", "oci:/images/layout:a", NULL },
  { "docker-archive:./a.tar", "docker-archive:./a.tar", NULL },
};

static const char *const bad[] = {
  "",
  "nvcr.io/nvidia/pytorch:24.05-py3", /* a registry without '#': Docker Hub has no such image */
  "127.0.0.1:5000/team/tiny:a",
  "Ubuntu:22.04",                     /* Docker's names are lowercase */
  "ubuntu:22.04 ",
  "ubuntu:",
  "ubuntu:a/b",
  "registry#tiny",                    /* our docker:// would read it as Docker Hub's */
  "nvcr.io#",
  "#tiny",
  "a b@nvcr.io#tiny",
  "ubuntu//x",
};

static void
reads_what_pyxis_reads (void **state)
{
  (void) state;
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    {
      char *source, *user;
      const char *why;
      if (pyxis_image_source (good[i].value, &source, &user, &why) < 0)
        fail_msg ("refused '%s': %s", good[i].value, why != NULL ? why : "out of memory");
      if (strcmp (source, good[i].source) != 0)
        fail_msg ("'%s': '%s', expected '%s'", good[i].value, source, good[i].source);
      if ((user == NULL) != (good[i].user == NULL)
          || (user != NULL && strcmp (user, good[i].user) != 0))
        fail_msg ("'%s': user '%s', expected '%s'", good[i].value, user ? user : "(none)",
                  good[i].user ? good[i].user : "(none)");
      free (source);
      free (user);
    }
}

static void
refuses_what_pyxis_would_not_find (void **state)
{
  (void) state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      char *source, *user;
      const char *why;
      if (pyxis_image_source (bad[i], &source, &user, &why) == 0)
        fail_msg ("accepted '%s' as '%s'", bad[i], source);
      if (why == NULL)
        fail_msg ("'%s': refused without a reason", bad[i]);
      assert_null (source);
      assert_null (user);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (reads_what_pyxis_reads),
    cmocka_unit_test (refuses_what_pyxis_would_not_find),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

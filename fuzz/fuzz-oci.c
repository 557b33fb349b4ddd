/* libFuzzer target: the readers of an OCI image's JSON documents (src/store/oci/oci-image.c), which
 * come from registries, layouts and docker save archives: anyone's. The first byte picks the
 * reader, the rest is the document:
 *
 *   0  oci_document_kind, then oci_index_select for linux/amd64 (a registry's index)
 *   1  oci_index_select by tag "a" (an OCI layout's index.json)
 *   2  oci_manifest_parse
 *   3  oci_config_parse, with rootfs.diff_ids (a docker save archive's config)
 *   4  oci_archive_manifest_parse, the only image
 *   5  oci_archive_manifest_parse, the image tagged "img:a"
 *
 * Invariants, when the reader accepts the document: every descriptor's digest is
 * sha256:HEX and a manifest's layers have a tar media type; the vectors are NULL-terminated
 * and hold strings; diff_ids are digests. A refusal returns a one-line message (the oci_try_*
 * readers, which the CLI's readers die() with), having freed what it allocated: the target
 * runs with LeakSanitizer on (fuzz/run). */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/meta.h"
#include "common/util.h"
#include "store/oci/oci-image.h"
#include "store/oci/oci-ref.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_descriptor (const struct oci_descriptor *d)
{
  assert (d->digest != NULL && oci_digest_is_valid (d->digest));
}

static void
check_strv (char **v)
{
  for (size_t i = 0; v != NULL && v[i] != NULL; i++)
    assert (strlen (v[i]) < OCI_DOCUMENT_MAX);
}

/* A refusal: one line, freed. */
static void
refused (char *error)
{
  assert (error != NULL && strchr (error, '\n') == NULL);
  free (error);
}

static void
read_document (int which, const char *text, size_t len)
{
  static const char *const what = "fuzz";
  static char linux_os[] = "linux", amd64_arch[] = "amd64";
  struct oci_platform amd64 = { .os = linux_os, .arch = amd64_arch };
  struct oci_descriptor d = { 0 };
  char *error = NULL;
  switch (which)
    {
    case 0:
    case 1:
      {
        enum oci_document_kind kind = OCI_DOC_INDEX;
        if (which == 0 && oci_try_document_kind (text, len, NULL, what, &kind, &error) < 0)
          {
            refused (error);
            return;
          }
        assert (kind == OCI_DOC_INDEX || kind == OCI_DOC_MANIFEST);
        if (kind != OCI_DOC_INDEX)
          return;
        if (oci_try_index_select (text, len, what, which == 0 ? NULL : "a", &amd64, &d,
                                  &error) < 0)
          {
            refused (error);
            return;
          }
        check_descriptor (&d);
        oci_descriptor_clear (&d);
        return;
      }
    case 2:
      {
        struct oci_manifest m;
        if (oci_try_manifest_parse (text, len, what, &m, &error) < 0)
          {
            refused (error);
            return;
          }
        check_descriptor (&m.config);
        for (size_t i = 0; i < m.n_layers; i++)
          {
            check_descriptor (&m.layers[i]);
            assert (m.layers[i].media_type != NULL);
          }
        assert (m.layers[m.n_layers].digest == NULL);
        oci_manifest_clear (&m);
        return;
      }
    case 3:
      {
        struct meta_image image = { 0 };
        char **diff_ids = NULL;
        if (oci_try_config_parse (text, len, what, &image, &diff_ids, &error) < 0)
          {
            refused (error);
            return;
          }
        check_strv (image.env);
        check_strv (image.entrypoint);
        check_strv (image.cmd);
        assert (diff_ids != NULL);
        for (size_t i = 0; diff_ids[i] != NULL; i++)
          assert (oci_digest_is_valid (diff_ids[i]));
        strv_free (diff_ids);
        meta_clear (&(struct meta) { .image = image });
        return;
      }
    default:
      {
        char *config = NULL, **layers = NULL;
        if (oci_try_archive_manifest_parse (text, len, what, which == 4 ? NULL : "img:a",
                                            &config, &layers, &error) < 0)
          {
            refused (error);
            return;
          }
        assert (config != NULL && layers != NULL);
        check_strv (layers);
        free (config);
        strv_free (layers);
        return;
      }
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1 || size - 1 > OCI_DOCUMENT_MAX)
    return -1;
  int which = data[0] % 6;
  char *text = xmalloc (size);
  memcpy (text, data + 1, size - 1);
  text[size - 1] = '\0';
  read_document (which, text, size - 1);
  free (text);
  return 0;
}

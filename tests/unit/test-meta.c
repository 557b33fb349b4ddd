/* Metadata JSON: what is written reads back the same, and is always valid, escaped JSON. */
#include "unit.h"

#include "common/meta.h"

static char *
to_json (const struct meta *m, const char *path)
{
  struct strbuf sb = { 0 };
  meta_append_json (&sb, m, path);
  return strbuf_steal (&sb);
}

static char *
escape (const char *s)
{
  struct strbuf sb = { 0 };
  json_append_string (&sb, s);
  return strbuf_steal (&sb);
}

static char dev[] = "dev";

static void
round_trip_keeps_every_field (void **state)
{
  char source[] = "/tmp/a \"quoted\"\\path\n\ttab\x01.tar";
  char sha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  char created[] = "2026-01-31T12:00:00Z";
  struct meta m = {
    .name = dev, .source = source, .sha256 = sha256, .created = created,
    .size_bytes = 18446744073709551615ULL,
  };
  char *json = to_json (&m, NULL);
  struct meta back = { 0 };
  const char *error = NULL;
  assert_int_equal (meta_parse_json (json, &back, &error), 0);
  assert_string_equal (back.name, m.name);
  assert_string_equal (back.source, m.source);
  assert_string_equal (back.sha256, m.sha256);
  assert_string_equal (back.created, m.created);
  assert_true (back.size_bytes == m.size_bytes);
  meta_clear (&back);
  free (json);
}

static void
round_trip_keeps_the_image_config (void **state)
{
  char ref[] = "docker://gcc:13", digest[] = "sha256:00", wd[] = "/w \"x\"";
  char e0[] = "A=1", e1[] = "B=two words", c0[] = "sh", c1[] = "-c", c2[] = "echo \"$A\"\n";
  char *env[] = { e0, e1, NULL }, *cmd[] = { c0, c1, c2, NULL }, *entry[] = { NULL };
  struct meta m = { .name = dev, .image = { .ref = ref, .digest = digest, .workdir = wd,
                                            .env = env, .cmd = cmd, .entrypoint = entry } };
  char *json = to_json (&m, NULL);
  struct meta back = { 0 };
  assert_int_equal (meta_parse_json (json, &back, NULL), 0);
  assert_string_equal (back.image.ref, ref);
  assert_string_equal (back.image.digest, digest);
  assert_string_equal (back.image.workdir, wd);
  assert_null (back.image.user);
  assert_int_equal (strv_length (back.image.env), 2);
  assert_string_equal (back.image.env[1], e1);
  assert_int_equal (strv_length (back.image.cmd), 3);
  assert_string_equal (back.image.cmd[2], c2);
  assert_non_null (back.image.entrypoint); /* [] is kept apart from absent */
  assert_null (back.image.entrypoint[0]);
  meta_clear (&back);
  free (json);
  assert_int_equal (meta_parse_json ("{\"image_cmd\": [\"a\", 1]}", &back, NULL), -1);
  assert_int_equal (meta_parse_json ("{\"image_cmd\": [\"a\"}", &back, NULL), -1);
}

static void
round_trip_keeps_utf8 (void **state)
{
  char source[] = "/tmp/d\xc3\xa9j\xc3\xa0/\xf0\x9f\x98\x80";
  struct meta m = { .name = dev, .source = source };
  char *json = to_json (&m, NULL);
  struct meta back = { 0 };
  assert_int_equal (meta_parse_json (json, &back, NULL), 0);
  assert_string_equal (back.source, m.source);
  meta_clear (&back);
  free (json);
}

static void
quotes_backslashes_and_controls_are_escaped (void **state)
{
  char *s = escape ("a\"b\\c\nd\te\x01\x1f\x7f");
  assert_string_equal (s, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f\\u007f\"");
  free (s);
}

static void
invalid_utf8_becomes_replacement_character (void **state)
{
  char *s = escape ("a\xff" "b\xc3" "c\xe0\x80\x80" "d");
  assert_string_equal (s, "\"a\\ufffdb\\ufffdc\\ufffd\\ufffd\\ufffdd\"");
  free (s);
}

static void
path_is_included_when_given (void **state)
{
  struct meta m = { .name = dev, .size_bytes = 3 };
  char *json = to_json (&m, "/r/dev");
  assert_non_null (strstr (json, "\"path\": \"/r/dev\""));
  assert_non_null (strstr (json, "\"size_bytes\": 3}"));
  free (json);
}

static void
parser_decodes_unicode_escapes (void **state)
{
  struct meta back = { 0 };
  assert_int_equal (meta_parse_json ("{\"source\": \"\\u00e9\\ud83d\\ude00\\/\"}", &back, NULL), 0);
  assert_string_equal (back.source, "\xc3\xa9\xf0\x9f\x98\x80/");
  meta_clear (&back);
}

static void
parser_ignores_unknown_keys (void **state)
{
  struct meta back = { 0 };
  assert_int_equal (meta_parse_json ("{\"future\": true, \"other\": null, \"n\": 5, "
                                     "\"name\": \"x\"}", &back, NULL), 0);
  assert_string_equal (back.name, "x");
  meta_clear (&back);
}

static void
parser_refuses_malformed_documents (void **state)
{
  static const char *const bad[] = {
    "", "[]", "{", "{\"name\"}", "{\"name\": }", "{\"name\": \"x\"", "{\"name\": \"x\"} extra",
    "{\"name\": \"\\q\"}", "{\"name\": \"\\u12\"}", "{\"name\": \"\\ud800\"}",
    "{\"name\": \"\\u0000\"}", "{\"name\": \"a\nb\"}", "{\"size_bytes\": 99999999999999999999999}",
    "{\"name\": \"x\",}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      struct meta back = { 0 };
      const char *error = NULL;
      if (meta_parse_json (bad[i], &back, &error) == 0)
        fail_msg ("accepted malformed JSON: %s", bad[i]);
      assert_non_null (error);
    }
}

static void
rfc3339_is_utc_with_z (void **state)
{
  char *s = format_rfc3339_utc (0);
  assert_string_equal (s, "1970-01-01T00:00:00Z");
  free (s);
  s = format_rfc3339_utc (1785499200);
  assert_string_equal (s, "2026-07-31T12:00:00Z");
  free (s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (round_trip_keeps_every_field),
    cmocka_unit_test (round_trip_keeps_utf8),
    cmocka_unit_test (quotes_backslashes_and_controls_are_escaped),
    cmocka_unit_test (invalid_utf8_becomes_replacement_character),
    cmocka_unit_test (path_is_included_when_given),
    cmocka_unit_test (parser_decodes_unicode_escapes),
    cmocka_unit_test (parser_ignores_unknown_keys),
    cmocka_unit_test (round_trip_keeps_the_image_config),
    cmocka_unit_test (parser_refuses_malformed_documents),
    cmocka_unit_test (rfc3339_is_utc_with_z),
  };
  return cmocka_run_group_tests_name ("meta", tests, NULL, NULL);
}

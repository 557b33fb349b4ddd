/* The template catalogue: parsing the INI text and resolving its URLs.
 *
 * Strict where a mistake would change what gets downloaded (a missing url or digest, a
 * malformed digest or size, two sections of one name, two values of one known key, a line
 * that is neither comment, header nor "key = value"), lax only where the format promises
 * forward compatibility (unknown keys). Every error names its line. */
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/name.h"
#include "common/util.h"
#include "store/cache/catalog.h"

struct parser
{
  struct catalog *cat;
  struct catalog_entry *cur;     /* the section being read, or NULL before the first */
  bool seen_url, seen_sha256, seen_size, seen_description;
  char *error;
};

__attribute__((format (printf, 3, 4))) static int
fail (struct parser *p, unsigned line, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  cleanup_free char *why = xvasprintf (format, args);
  va_end (args);
  /* Messages quote catalogue text: keep escape sequences off the user's terminal. */
  cleanup_free char *safe = printable_copy (why);
  p->error = xasprintf ("line %u: %s", line, safe);
  return -1;
}

static bool
is_space (char c)
{
  return c == ' ' || c == '\t';
}

/* Trim spaces and tabs at both ends of [*s, *s + *len). */
static void
trim (const char **s, size_t *len)
{
  while (*len > 0 && is_space (**s))
    (*s)++, (*len)--;
  while (*len > 0 && is_space ((*s)[*len - 1]))
    (*len)--;
}

static bool
is_key_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
         || c == '-' || c == '_';
}

/* The checks that need the whole section: run at the next header and at the end. */
static int
finish_section (struct parser *p)
{
  struct catalog_entry *e = p->cur;
  if (e == NULL)
    return 0;
  if (!p->seen_url)
    return fail (p, e->line, "template '%s' has no url", e->name);
  if (!p->seen_sha256)
    return fail (p, e->line, "template '%s' has no sha256", e->name);
  return 0;
}

static int
start_section (struct parser *p, unsigned line, const char *s, size_t len)
{
  if (finish_section (p) < 0)
    return -1;
  /* s is "[...]"; spaces inside the brackets are tolerated, as git does. */
  const char *name = s + 1;
  size_t nlen = len - 2;
  trim (&name, &nlen);
  cleanup_free char *copy = strndup (name, nlen);
  if (copy == NULL)
    die ("out of memory");
  if (!name_is_valid (copy))
    return fail (p, line, "invalid template name '%s': must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}",
                 copy);
  const struct catalog_entry *dup = catalog_find (p->cat, copy);
  if (dup != NULL)
    return fail (p, line, "duplicate template '%s' (first defined on line %u)", copy, dup->line);
  struct catalog *c = p->cat;
  c->entries = xrealloc (c->entries, (c->n_entries + 1) * sizeof *c->entries);
  p->cur = &c->entries[c->n_entries++];
  *p->cur = (struct catalog_entry) { .name = steal_pointer (&copy), .line = line };
  p->seen_url = p->seen_sha256 = p->seen_size = p->seen_description = false;
  return 0;
}

static int
parse_size (const char *value, uint64_t *out)
{
  if (value[0] < '0' || value[0] > '9')
    return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull (value, &end, 10);
  if (errno != 0 || *end != '\0')
    return -1;
  *out = v;
  return 0;
}

/* Set a known key once; a second value is an error, not a silent override. */
static int
once (struct parser *p, unsigned line, bool *seen, const char *key)
{
  if (*seen)
    return fail (p, line, "duplicate key '%s' in this template", key);
  *seen = true;
  return 0;
}

static int
set_key (struct parser *p, unsigned line, const char *key, const char *value)
{
  struct catalog_entry *e = p->cur;
  if (e == NULL)
    return fail (p, line, "'%s' is outside any [template] section", key);
  if (strcmp (key, "url") == 0)
    {
      if (once (p, line, &p->seen_url, key) < 0)
        return -1;
      if (value[0] == '\0')
        return fail (p, line, "empty url");
      e->url = xstrdup (value);
    }
  else if (strcmp (key, "sha256") == 0)
    {
      if (once (p, line, &p->seen_sha256, key) < 0)
        return -1;
      /* Exactly 64 lowercase hex digits, as the format says: anything else is a typo
       * worth stopping for, since it decides what is trusted. */
      bool ok = strlen (value) == SHA256_HEX_LEN;
      for (size_t i = 0; ok && i < SHA256_HEX_LEN; i++)
        ok = (value[i] >= '0' && value[i] <= '9') || (value[i] >= 'a' && value[i] <= 'f');
      if (!ok)
        return fail (p, line, "bad sha256 '%s': expected 64 lowercase hexadecimal digits", value);
      memcpy (e->sha256, value, SHA256_HEX_LEN + 1);
    }
  else if (strcmp (key, "size") == 0)
    {
      if (once (p, line, &p->seen_size, key) < 0)
        return -1;
      if (parse_size (value, &e->size) < 0)
        return fail (p, line, "bad size '%s': expected a number of bytes", value);
      e->has_size = true;
    }
  else if (strcmp (key, "description") == 0)
    {
      if (once (p, line, &p->seen_description, key) < 0)
        return -1;
      e->description = xstrdup (value);
    }
  /* Any other key: ignored, for forward compatibility. */
  return 0;
}

static int
parse_line (struct parser *p, unsigned line, const char *s, size_t len)
{
  trim (&s, &len);
  if (len == 0 || s[0] == '#' || s[0] == ';')
    return 0;
  if (s[0] == '[')
    {
      if (len < 2 || s[len - 1] != ']')
        return fail (p, line, "malformed section header (expected [name])");
      return start_section (p, line, s, len);
    }
  size_t klen = 0;
  while (klen < len && is_key_char (s[klen]))
    klen++;
  const char *rest = s + klen;
  size_t rlen = len - klen;
  trim (&rest, &rlen);
  if (klen == 0 || rlen == 0 || rest[0] != '=')
    return fail (p, line, "malformed line (expected 'key = value', '[name]' or '# comment')");
  const char *value = rest + 1;
  size_t vlen = rlen - 1;
  trim (&value, &vlen);
  cleanup_free char *key = strndup (s, klen);
  cleanup_free char *val = strndup (value, vlen);
  if (key == NULL || val == NULL)
    die ("out of memory");
  return set_key (p, line, key, val);
}

int
catalog_parse (const char *text, size_t len, struct catalog *out, char **error)
{
  *out = (struct catalog) { 0 };
  struct parser p = { .cat = out };
  const char *s = text, *end = text + len;
  unsigned line = 0;
  int ret = 0;

  if (memchr (text, '\0', len) != NULL)
    {
      cleanup_free char *before = strndup (text, len);
      unsigned nul_line = 1;
      for (const char *q = before; *q != '\0'; q++)
        nul_line += *q == '\n';
      ret = fail (&p, nul_line, "a NUL byte: this is not a text catalogue");
    }
  while (ret == 0 && s < end)
    {
      const char *nl = memchr (s, '\n', (size_t) (end - s));
      size_t l = nl != NULL ? (size_t) (nl - s) : (size_t) (end - s);
      line++;
      size_t content = l > 0 && s[l - 1] == '\r' ? l - 1 : l;
      ret = parse_line (&p, line, s, content);
      s += l + (nl != NULL);
    }
  if (ret == 0)
    ret = finish_section (&p);
  if (ret < 0)
    {
      catalog_clear (out);
      *error = p.error;
      return -1;
    }
  for (size_t i = 0; i < out->n_entries; i++)
    if (out->entries[i].description == NULL)
      out->entries[i].description = xstrdup ("");
  return 0;
}

void
catalog_clear (struct catalog *cat)
{
  for (size_t i = 0; i < cat->n_entries; i++)
    {
      free (cat->entries[i].name);
      free (cat->entries[i].url);
      free (cat->entries[i].description);
    }
  free (cat->entries);
  *cat = (struct catalog) { 0 };
}

char *
printable_copy (const char *s)
{
  char *copy = xstrdup (s);
  for (char *p = copy; *p != '\0'; p++)
    if ((unsigned char) *p < 0x20 || (unsigned char) *p > 0x7e)
      *p = '?';
  return copy;
}

const struct catalog_entry *
catalog_find (const struct catalog *cat, const char *name)
{
  for (size_t i = 0; i < cat->n_entries; i++)
    if (strcmp (cat->entries[i].name, name) == 0)
      return &cat->entries[i];
  return NULL;
}

int
url_resolve (const char *base, const char *ref, char **out, char **error)
{
  CURLU *u = curl_url ();
  if (u == NULL)
    die ("out of memory");
  CURLUcode rc = base != NULL ? curl_url_set (u, CURLUPART_URL, base, 0) : CURLUE_OK;
  const char *what = base;
  if (rc == CURLUE_OK)
    {
      /* With a URL already set, a relative reference is resolved against it. */
      rc = curl_url_set (u, CURLUPART_URL, ref, 0);
      what = ref;
    }
  char *url = NULL;
  if (rc == CURLUE_OK)
    rc = curl_url_get (u, CURLUPART_URL, &url, 0);
  curl_url_cleanup (u);
  if (rc != CURLUE_OK)
    {
      *error = xasprintf ("invalid URL '%s': %s", what, curl_url_strerror (rc));
      return -1;
    }
  *out = xstrdup (url);
  curl_free (url);
  return 0;
}

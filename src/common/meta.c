/* A devroot's metadata, kept beside the root (never inside it) as a small JSON file, and
 * the JSON text `list --json` prints. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/meta.h"

#define META_MAX_SIZE (1024 * 1024)

/* The schema, once: every field of struct meta, its JSON key, in the order written. The
 * writer (meta_append_json), the reader (meta_parse_json) and meta_clear all walk it. */
enum field_kind
{
  FIELD_STRING,   /* char *, written as null when NULL */
  FIELD_OPTIONAL, /* char *, left out when NULL */
  FIELD_STRV,     /* char **, NULL-terminated, left out when NULL */
  FIELD_U64,
};

static const struct field
{
  const char *key;
  enum field_kind kind;
  size_t offset;
} fields[] = {
  { "name", FIELD_STRING, offsetof (struct meta, name) },
  /* "path" (list --json) goes here: meta_append_json */
  { "source", FIELD_STRING, offsetof (struct meta, source) },
  { "sha256", FIELD_STRING, offsetof (struct meta, sha256) },
  { "created", FIELD_STRING, offsetof (struct meta, created) },
  { "size_bytes", FIELD_U64, offsetof (struct meta, size_bytes) },
  { "resolv_conf_copy", FIELD_OPTIONAL,
    offsetof (struct meta, host_copies) + META_COPY_RESOLV_CONF * sizeof (char *) },
  { "hosts_copy", FIELD_OPTIONAL,
    offsetof (struct meta, host_copies) + META_COPY_HOSTS * sizeof (char *) },
  { "image", FIELD_OPTIONAL, offsetof (struct meta, image.ref) },
  { "image_digest", FIELD_OPTIONAL, offsetof (struct meta, image.digest) },
  { "image_workdir", FIELD_OPTIONAL, offsetof (struct meta, image.workdir) },
  { "image_user", FIELD_OPTIONAL, offsetof (struct meta, image.user) },
  { "image_env", FIELD_STRV, offsetof (struct meta, image.env) },
  { "image_entrypoint", FIELD_STRV, offsetof (struct meta, image.entrypoint) },
  { "image_cmd", FIELD_STRV, offsetof (struct meta, image.cmd) },
  { "image_transport", FIELD_OPTIONAL, offsetof (struct meta, image.transport) },
  { "layers", FIELD_STRV, offsetof (struct meta, layers) },
  { "layout", FIELD_OPTIONAL, offsetof (struct meta, layout) },
};
_Static_assert (META_N_COPIES == 2, "a host file's copy needs its row in fields[]");

static char **
string_at (struct meta *m, const struct field *f)
{
  return (char **) (void *) ((char *) m + f->offset);
}

static char ***
strv_at (struct meta *m, const struct field *f)
{
  return (char ***) (void *) ((char *) m + f->offset);
}

static const char *
string_of (const struct meta *m, const struct field *f)
{
  return *(char *const *) (const void *) ((const char *) m + f->offset);
}

static char *const *
strv_of (const struct meta *m, const struct field *f)
{
  return *(char **const *) (const void *) ((const char *) m + f->offset);
}

/* The row of KEY if it holds a value of KIND (FIELD_STRING also matching FIELD_OPTIONAL). */
static const struct field *
field_of (const char *key, enum field_kind kind)
{
  for (size_t i = 0; i < N_ELEMENTS (fields); i++)
    if (strcmp (fields[i].key, key) == 0
        && (fields[i].kind == kind || (kind == FIELD_STRING && fields[i].kind == FIELD_OPTIONAL)))
      return &fields[i];
  return NULL;
}

void
meta_clear (struct meta *m)
{
  for (size_t i = 0; i < N_ELEMENTS (fields); i++)
    if (fields[i].kind == FIELD_STRV)
      strv_free (*strv_at (m, &fields[i]));
    else if (fields[i].kind != FIELD_U64)
      free (*string_at (m, &fields[i]));
  *m = (struct meta) { 0 };
}

const char *
meta_base_image (const struct meta *m)
{
  const char *ref = m->image.ref;
  return ref != NULL && m->source != NULL && strcmp (ref, m->source) == 0 ? ref : NULL;
}

char *
meta_copy_stamp (const struct stat *st)
{
  return xasprintf ("%ju:%jd:%jd.%09ld", (uintmax_t) st->st_ino, (intmax_t) st->st_size,
                    (intmax_t) st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

char *
format_rfc3339_utc (time_t t)
{
  struct tm tm;
  char buf[sizeof "YYYY-MM-DDTHH:MM:SSZ" + 16];
  if (gmtime_r (&t, &tm) == NULL || strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    return xstrdup ("1970-01-01T00:00:00Z");
  return xstrdup (buf);
}

/* Length of the valid UTF-8 sequence at S (1-4), or 0 when it is not one. */
static size_t
utf8_sequence_length (const unsigned char *s)
{
  size_t len;
  uint32_t cp;
  if (s[0] < 0x80)
    return 1;
  else if ((s[0] & 0xe0) == 0xc0)
    len = 2, cp = s[0] & 0x1f;
  else if ((s[0] & 0xf0) == 0xe0)
    len = 3, cp = s[0] & 0x0f;
  else if ((s[0] & 0xf8) == 0xf0)
    len = 4, cp = s[0] & 0x07;
  else
    return 0;
  for (size_t i = 1; i < len; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (s[i] & 0x3f);
    }
  static const uint32_t min_for_len[] = { 0, 0, 0x80, 0x800, 0x10000 };
  if (cp < min_for_len[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0; /* overlong, out of range, or a surrogate */
  return len;
}

void
json_append_string (struct strbuf *sb, const char *s)
{
  const unsigned char *p = (const unsigned char *) (s != NULL ? s : "");
  strbuf_append_c (sb, '"');
  while (*p != '\0')
    {
      switch (*p)
        {
        case '"': strbuf_append (sb, "\\\""); p++; continue;
        case '\\': strbuf_append (sb, "\\\\"); p++; continue;
        case '\n': strbuf_append (sb, "\\n"); p++; continue;
        case '\t': strbuf_append (sb, "\\t"); p++; continue;
        case '\r': strbuf_append (sb, "\\r"); p++; continue;
        case '\b': strbuf_append (sb, "\\b"); p++; continue;
        case '\f': strbuf_append (sb, "\\f"); p++; continue;
        default: break;
        }
      if (*p < 0x20 || *p == 0x7f)
        {
          strbuf_appendf (sb, "\\u%04x", *p);
          p++;
          continue;
        }
      size_t len = utf8_sequence_length (p);
      if (len == 0)
        {
          strbuf_append (sb, "\\ufffd");
          p++;
          continue;
        }
      strbuf_append_len (sb, (const char *) p, len);
      p += len;
    }
  strbuf_append_c (sb, '"');
}

void
meta_append_json (struct strbuf *sb, const struct meta *m, const char *path)
{
  for (size_t i = 0; i < N_ELEMENTS (fields); i++)
    {
      const struct field *f = &fields[i];
      if ((f->kind == FIELD_OPTIONAL && string_of (m, f) == NULL)
          || (f->kind == FIELD_STRV && strv_of (m, f) == NULL))
        continue;
      strbuf_appendf (sb, "%s\"%s\": ", i == 0 ? "{" : ", ", f->key);
      if (f->kind == FIELD_U64)
        strbuf_appendf (sb, "%" PRIu64, m->size_bytes);
      else if (f->kind != FIELD_STRV)
        json_append_string (sb, string_of (m, f));
      else
        {
          char *const *v = strv_of (m, f);
          strbuf_append_c (sb, '[');
          for (size_t k = 0; v[k] != NULL; k++)
            {
              if (k > 0)
                strbuf_append (sb, ", ");
              json_append_string (sb, v[k]);
            }
          strbuf_append_c (sb, ']');
        }
      if (i == 0 && path != NULL)
        {
          strbuf_append (sb, ", \"path\": ");
          json_append_string (sb, path);
        }
    }
  strbuf_append_c (sb, '}');
}

/* ---- A deliberately small JSON reader: one object whose values are strings, unsigned
 * integers, true/false/null and arrays of strings. It reads only files this program wrote
 * (the image fields were taken from an untrusted config by enter-devroot-store's JSON
 * library and written back by meta_append_json), but is still strict. */

struct json_cursor
{
  const char *p;
  const char *error;
};

static void
skip_ws (struct json_cursor *c)
{
  while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
    c->p++;
}

/* CH between white space: false with c->error ERROR when something else is there. */
static bool
expect_char (struct json_cursor *c, char ch, const char *error)
{
  skip_ws (c);
  if (*c->p++ != ch)
    {
      c->error = error;
      return false;
    }
  skip_ws (c);
  return true;
}

/* After an item of the array or object that CLOSE ends: 1 past a ',' (another item
 * follows), 0 past CLOSE, -1 with c->error on anything else. */
static int
next_item (struct json_cursor *c, char close)
{
  skip_ws (c);
  if (*c->p == ',')
    {
      c->p++;
      return 1;
    }
  if (*c->p++ == close)
    return 0;
  c->error = close == ']' ? "expected ',' or ']'" : "expected ',' or '}'";
  return -1;
}

static int
hex4 (const char *p, uint32_t *out)
{
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    {
      char ch = p[i];
      v <<= 4;
      if (ch >= '0' && ch <= '9') v |= (uint32_t) (ch - '0');
      else if (ch >= 'a' && ch <= 'f') v |= (uint32_t) (ch - 'a' + 10);
      else if (ch >= 'A' && ch <= 'F') v |= (uint32_t) (ch - 'A' + 10);
      else return -1;
    }
  *out = v;
  return 0;
}

static void
append_utf8 (struct strbuf *sb, uint32_t cp)
{
  char b[4];
  if (cp < 0x80)
    strbuf_append_c (sb, (char) cp);
  else if (cp < 0x800)
    {
      b[0] = (char) (0xc0 | (cp >> 6));
      b[1] = (char) (0x80 | (cp & 0x3f));
      strbuf_append_len (sb, b, 2);
    }
  else if (cp < 0x10000)
    {
      b[0] = (char) (0xe0 | (cp >> 12));
      b[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
      b[2] = (char) (0x80 | (cp & 0x3f));
      strbuf_append_len (sb, b, 3);
    }
  else
    {
      b[0] = (char) (0xf0 | (cp >> 18));
      b[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
      b[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
      b[3] = (char) (0x80 | (cp & 0x3f));
      strbuf_append_len (sb, b, 4);
    }
}

static char *
parse_string (struct json_cursor *c)
{
  struct strbuf sb = { 0 };
  if (*c->p != '"')
    {
      c->error = "expected a string";
      return NULL;
    }
  c->p++;
  while (*c->p != '"')
    {
      unsigned char ch = (unsigned char) *c->p;
      if (ch == '\0' || ch < 0x20)
        {
          c->error = ch == '\0' ? "unterminated string" : "control character in string";
          free (sb.str);
          return NULL;
        }
      if (ch != '\\')
        {
          strbuf_append_c (&sb, (char) ch);
          c->p++;
          continue;
        }
      c->p++;
      char esc = *c->p++;
      switch (esc)
        {
        case '"': strbuf_append_c (&sb, '"'); break;
        case '\\': strbuf_append_c (&sb, '\\'); break;
        case '/': strbuf_append_c (&sb, '/'); break;
        case 'b': strbuf_append_c (&sb, '\b'); break;
        case 'f': strbuf_append_c (&sb, '\f'); break;
        case 'n': strbuf_append_c (&sb, '\n'); break;
        case 'r': strbuf_append_c (&sb, '\r'); break;
        case 't': strbuf_append_c (&sb, '\t'); break;
        case 'u':
          {
            uint32_t cp, lo;
            if (hex4 (c->p, &cp) < 0)
              goto bad_escape;
            c->p += 4;
            if (cp >= 0xd800 && cp <= 0xdbff)
              {
                if (c->p[0] != '\\' || c->p[1] != 'u' || hex4 (c->p + 2, &lo) < 0
                    || lo < 0xdc00 || lo > 0xdfff)
                  goto bad_escape;
                c->p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
              }
            else if (cp >= 0xdc00 && cp <= 0xdfff)
              goto bad_escape;
            if (cp == 0)
              goto bad_escape; /* NUL cannot live in a C string */
            append_utf8 (&sb, cp);
            break;
          }
        default:
          goto bad_escape;
        }
    }
  c->p++;
  return strbuf_steal (&sb);

bad_escape:
  c->error = "invalid escape in string";
  free (sb.str);
  return NULL;
}

static void
set_string (char **field, char *value)
{
  free (*field);
  *field = value;
}

/* An array of strings at the cursor; NULL with c->error on anything else. */
static char **
parse_string_array (struct json_cursor *c)
{
  c->p++; /* '[' */
  char **v = xcalloc (1, sizeof (char *));
  size_t n = 0;
  skip_ws (c);
  if (*c->p == ']')
    {
      c->p++;
      return v;
    }
  for (;;)
    {
      skip_ws (c);
      char *s = parse_string (c);
      if (s == NULL)
        {
          strv_free (v);
          return NULL;
        }
      v = xrealloc (v, (n + 2) * sizeof (char *));
      v[n++] = s;
      v[n] = NULL;
      int more = next_item (c, ']');
      if (more > 0)
        continue;
      if (more == 0)
        return v;
      strv_free (v);
      return NULL;
    }
}

static void
set_strv (char ***field, char **value)
{
  strv_free (*field);
  *field = value;
}

int
meta_parse_json (const char *text, struct meta *out, const char **error)
{
  struct json_cursor c = { .p = text, .error = NULL };
  struct meta m = { 0 };

  if (!expect_char (&c, '{', "expected an object"))
    goto fail;
  if (*c.p == '}')
    c.p++;
  else
    for (;;)
      {
        skip_ws (&c);
        cleanup_free char *key = parse_string (&c);
        if (key == NULL)
          goto fail;
        if (!expect_char (&c, ':', "expected ':'"))
          goto fail;
        if (*c.p == '"')
          {
            char *value = parse_string (&c);
            if (value == NULL)
              goto fail;
            const struct field *f = field_of (key, FIELD_STRING);
            if (f != NULL)
              set_string (string_at (&m, f), value);
            else
              free (value);
          }
        else if (*c.p == '[')
          {
            char **value = parse_string_array (&c);
            if (value == NULL)
              goto fail;
            const struct field *f = field_of (key, FIELD_STRV);
            if (f != NULL)
              set_strv (strv_at (&m, f), value);
            else
              strv_free (value);
          }
        else if (*c.p >= '0' && *c.p <= '9')
          {
            char *end;
            errno = 0;
            unsigned long long v = strtoull (c.p, &end, 10);
            if (errno != 0)
              {
                c.error = "number out of range";
                goto fail;
              }
            c.p = end;
            if (field_of (key, FIELD_U64) != NULL)
              m.size_bytes = v;
          }
        else if (str_has_prefix (c.p, "null") || str_has_prefix (c.p, "true"))
          c.p += 4;
        else if (str_has_prefix (c.p, "false"))
          c.p += 5;
        else
          {
            c.error = "unsupported value";
            goto fail;
          }
        int more = next_item (&c, '}');
        if (more < 0)
          goto fail;
        if (more == 0)
          break;
      }
  skip_ws (&c);
  if (*c.p != '\0')
    {
      c.error = "trailing characters after the object";
      goto fail;
    }
  meta_clear (out);
  *out = m;
  return 0;

fail:
  meta_clear (&m);
  if (error != NULL)
    *error = c.error;
  return -1;
}

void
meta_write (const char *path, const struct meta *m)
{
  struct strbuf sb = { 0 };
  meta_append_json (&sb, m, NULL);
  strbuf_append_c (&sb, '\n');
  cleanup_free char *text = strbuf_steal (&sb);
  if (atomic_file_write (AT_FDCWD, path, text, strlen (text), 0600, ATOMIC_FSYNC) < 0)
    die_with_error ("cannot write metadata %s", path);
}

int
meta_read (const char *path, struct meta *out)
{
  cleanup_free char *text = load_file_at (AT_FDCWD, path, META_MAX_SIZE, NULL);
  if (text == NULL)
    return -1;
  const char *error = NULL;
  if (meta_parse_json (text, out, &error) < 0)
    {
      errno = EINVAL;
      return -1;
    }
  return 0;
}

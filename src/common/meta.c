/* A devroot's metadata, kept beside the root (never inside it) as a small JSON file, and
 * the JSON text `list --json` prints. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/meta.h"

#define META_MAX_SIZE (1024 * 1024)

static const char *const copy_keys[META_N_COPIES] = {
  [META_COPY_RESOLV_CONF] = "resolv_conf_copy",
  [META_COPY_HOSTS] = "hosts_copy",
};

void
meta_clear (struct meta *m)
{
  free (m->name);
  free (m->source);
  free (m->sha256);
  free (m->created);
  for (size_t i = 0; i < META_N_COPIES; i++)
    free (m->host_copies[i]);
  free (m->image.ref);
  free (m->image.digest);
  strv_free (m->image.env);
  free (m->image.workdir);
  free (m->image.user);
  strv_free (m->image.entrypoint);
  strv_free (m->image.cmd);
  *m = (struct meta) { 0 };
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
  strbuf_append (sb, "{\"name\": ");
  json_append_string (sb, m->name);
  if (path != NULL)
    {
      strbuf_append (sb, ", \"path\": ");
      json_append_string (sb, path);
    }
  strbuf_append (sb, ", \"source\": ");
  json_append_string (sb, m->source);
  strbuf_append (sb, ", \"sha256\": ");
  json_append_string (sb, m->sha256);
  strbuf_append (sb, ", \"created\": ");
  json_append_string (sb, m->created);
  strbuf_appendf (sb, ", \"size_bytes\": %" PRIu64, m->size_bytes);
  for (size_t i = 0; i < META_N_COPIES; i++)
    if (m->host_copies[i] != NULL)
      {
        strbuf_appendf (sb, ", \"%s\": ", copy_keys[i]);
        json_append_string (sb, m->host_copies[i]);
      }
  const struct { const char *key; const char *value; } strings[] = {
    { "image", m->image.ref }, { "image_digest", m->image.digest },
    { "image_workdir", m->image.workdir }, { "image_user", m->image.user },
  };
  for (size_t i = 0; i < N_ELEMENTS (strings); i++)
    if (strings[i].value != NULL)
      {
        strbuf_appendf (sb, ", \"%s\": ", strings[i].key);
        json_append_string (sb, strings[i].value);
      }
  const struct { const char *key; char *const *value; } vectors[] = {
    { "image_env", m->image.env }, { "image_entrypoint", m->image.entrypoint },
    { "image_cmd", m->image.cmd },
  };
  for (size_t i = 0; i < N_ELEMENTS (vectors); i++)
    if (vectors[i].value != NULL)
      {
        strbuf_appendf (sb, ", \"%s\": [", vectors[i].key);
        for (size_t k = 0; vectors[i].value[k] != NULL; k++)
          {
            if (k > 0)
              strbuf_append (sb, ", ");
            json_append_string (sb, vectors[i].value[k]);
          }
        strbuf_append_c (sb, ']');
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

/* true when KEY names a host file's copy stamp (VALUE is then owned by M). */
static bool
set_copy_stamp (struct meta *m, const char *key, char *value)
{
  for (size_t i = 0; i < META_N_COPIES; i++)
    if (strcmp (key, copy_keys[i]) == 0)
      {
        set_string (&m->host_copies[i], value);
        return true;
      }
  return false;
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
      skip_ws (c);
      if (*c->p == ',')
        {
          c->p++;
          continue;
        }
      if (*c->p++ == ']')
        return v;
      c->error = "expected ',' or ']'";
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

  skip_ws (&c);
  if (*c.p++ != '{')
    {
      c.error = "expected an object";
      goto fail;
    }
  skip_ws (&c);
  if (*c.p == '}')
    c.p++;
  else
    for (;;)
      {
        skip_ws (&c);
        cleanup_free char *key = parse_string (&c);
        if (key == NULL)
          goto fail;
        skip_ws (&c);
        if (*c.p++ != ':')
          {
            c.error = "expected ':'";
            goto fail;
          }
        skip_ws (&c);
        if (*c.p == '"')
          {
            char *value = parse_string (&c);
            if (value == NULL)
              goto fail;
            if (strcmp (key, "name") == 0) set_string (&m.name, value);
            else if (strcmp (key, "source") == 0) set_string (&m.source, value);
            else if (strcmp (key, "sha256") == 0) set_string (&m.sha256, value);
            else if (strcmp (key, "created") == 0) set_string (&m.created, value);
            else if (strcmp (key, "image") == 0) set_string (&m.image.ref, value);
            else if (strcmp (key, "image_digest") == 0) set_string (&m.image.digest, value);
            else if (strcmp (key, "image_workdir") == 0) set_string (&m.image.workdir, value);
            else if (strcmp (key, "image_user") == 0) set_string (&m.image.user, value);
            else if (!set_copy_stamp (&m, key, value)) free (value);
          }
        else if (*c.p == '[')
          {
            char **value = parse_string_array (&c);
            if (value == NULL)
              goto fail;
            if (strcmp (key, "image_env") == 0) set_strv (&m.image.env, value);
            else if (strcmp (key, "image_entrypoint") == 0) set_strv (&m.image.entrypoint, value);
            else if (strcmp (key, "image_cmd") == 0) set_strv (&m.image.cmd, value);
            else strv_free (value);
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
            if (strcmp (key, "size_bytes") == 0)
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
        skip_ws (&c);
        if (*c.p == ',')
          {
            c.p++;
            continue;
          }
        if (*c.p++ == '}')
          break;
        c.error = "expected ',' or '}'";
        goto fail;
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

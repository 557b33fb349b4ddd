/* The edits format both programs read (see cdi-edits.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cdi-edits.h"
#include "common/util.h"

bool
cdi_mount_has (const char *options, const char *word)
{
  size_t n = strlen (word);
  for (const char *p = options; p != NULL && *p != '\0';)
    {
      size_t len = strcspn (p, ",");
      if (len == n && strncmp (p, word, n) == 0)
        return true;
      p += len + (p[len] == ',');
    }
  return false;
}

/* ---- encoding ---- */

static void
put (struct strbuf *b, const char *s)
{
  strbuf_append_len (b, s, strlen (s) + 1);
}

static void
put_strv (struct strbuf *b, char *const *v)
{
  char n[24];
  snprintf (n, sizeof n, "%zu", strv_length (v));
  put (b, n);
  for (size_t i = 0; v != NULL && v[i] != NULL; i++)
    put (b, v[i]);
}

char *
cdi_edits_encode (const struct cdi_edits *e, size_t *len)
{
  struct strbuf b = { 0 };
  put (&b, CDI_EDITS_MAGIC);
  for (size_t i = 0; e->env != NULL && e->env[i] != NULL; i++)
    {
      put (&b, "env");
      put (&b, e->env[i]);
    }
  for (size_t i = 0; i < e->n_nodes; i++)
    {
      put (&b, "node");
      put (&b, e->nodes[i].host);
      put (&b, e->nodes[i].path);
    }
  for (size_t i = 0; i < e->n_mounts; i++)
    {
      put (&b, "mount");
      put (&b, e->mounts[i].host);
      put (&b, e->mounts[i].path);
      put (&b, e->mounts[i].options);
    }
  for (size_t i = 0; i < e->n_hooks; i++)
    {
      const struct cdi_hook *h = &e->hooks[i];
      char timeout[16];
      snprintf (timeout, sizeof timeout, "%u", h->timeout);
      put (&b, "hook");
      put (&b, h->stage);
      put (&b, h->spec);
      put (&b, h->path);
      put (&b, timeout);
      put_strv (&b, h->args);
      put_strv (&b, h->env);
    }
  *len = b.len;
  return strbuf_steal (&b);
}

/* ---- decoding ---- */

struct reader
{
  const char *buf;
  size_t len, at;
};

/* The next field, or NULL at the end or where the last one has no NUL. */
static const char *
next_field (struct reader *r)
{
  if (r->at >= r->len)
    return NULL;
  const char *f = r->buf + r->at;
  const char *nul = memchr (f, '\0', r->len - r->at);
  if (nul == NULL)
    return NULL;
  r->at += (size_t) (nul - f) + 1;
  return f;
}

static char *
take (struct reader *r, bool *ok)
{
  const char *f = next_field (r);
  if (f == NULL)
    {
      *ok = false;
      return NULL;
    }
  return xstrdup (f);
}

/* Digits, without a leading zero (as the encoder writes a number: one form only). */
static bool
is_decimal (const char *f)
{
  return f[0] >= '0' && f[0] <= '9' && strspn (f, "0123456789") == strlen (f)
         && (f[0] != '0' || f[1] == '\0');
}

/* A decimal count: at most what the fields left could hold (each one byte at least). */
static bool
take_count (struct reader *r, size_t *n)
{
  const char *f = next_field (r);
  if (f == NULL || !is_decimal (f) || strlen (f) > 9)
    return false;
  char *end;
  unsigned long v = strtoul (f, &end, 10);
  if (*end != '\0' || v > r->len - r->at)
    return false;
  *n = v;
  return true;
}

static bool
take_strv (struct reader *r, char ***out)
{
  size_t n;
  if (!take_count (r, &n))
    return false;
  char **v = xcalloc (n + 1, sizeof (char *));
  *out = v;
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++)
    v[i] = take (r, &ok);
  return ok;
}

static void
grow (void **array, size_t n, size_t size)
{
  *array = xrealloc (*array, (n + 1) * size);
  memset ((char *) *array + n * size, 0, size);
}

static bool
take_hook (struct reader *r, struct cdi_edits *e)
{
  grow ((void **) &e->hooks, e->n_hooks, sizeof *e->hooks);
  struct cdi_hook *h = &e->hooks[e->n_hooks++];
  bool ok = true;
  h->stage = take (r, &ok);
  h->spec = take (r, &ok);
  h->path = take (r, &ok);
  cleanup_free char *timeout = take (r, &ok);
  if (!ok || !take_strv (r, &h->args) || !take_strv (r, &h->env))
    return false;
  char *end;
  errno = 0;
  unsigned long t = strtoul (timeout, &end, 10);
  if (!is_decimal (timeout) || *end != '\0' || errno != 0 || t > UINT32_MAX)
    return false;
  h->timeout = (unsigned) t;
  return true;
}

/* One record of KIND (its word read) into E. */
static bool
take_record (struct reader *r, const char *kind, struct cdi_edits *e, size_t *n_env)
{
  bool ok = true;
  if (strcmp (kind, "env") == 0)
    {
      e->env = xrealloc (e->env, (*n_env + 2) * sizeof (char *));
      e->env[*n_env] = take (r, &ok);
      e->env[++*n_env] = NULL;
    }
  else if (strcmp (kind, "node") == 0)
    {
      grow ((void **) &e->nodes, e->n_nodes, sizeof *e->nodes);
      struct cdi_node *n = &e->nodes[e->n_nodes++];
      n->host = take (r, &ok);
      n->path = take (r, &ok);
    }
  else if (strcmp (kind, "mount") == 0)
    {
      grow ((void **) &e->mounts, e->n_mounts, sizeof *e->mounts);
      struct cdi_mount *m = &e->mounts[e->n_mounts++];
      m->host = take (r, &ok);
      m->path = take (r, &ok);
      m->options = take (r, &ok);
    }
  else
    ok = take_hook (r, e);
  return ok;
}

int
cdi_edits_decode (const char *buf, size_t len, struct cdi_edits *e, const char **why)
{
  *e = (struct cdi_edits) { .env = xcalloc (1, sizeof (char *)) };
  struct reader r = { .buf = buf, .len = len };
  const char *magic = next_field (&r);
  if (magic == NULL || strcmp (magic, CDI_EDITS_MAGIC) != 0)
    {
      *why = "not the edits of this version of enter-devroot-cdi";
      return -1;
    }
  /* The records come in the encoder's order, env, node, mount, hook: one form only. */
  static const char *const order[] = { "env", "node", "mount", "hook" };
  size_t rank = 0, n_env = 0;
  bool ok = true;
  for (const char *kind; ok && (kind = next_field (&r)) != NULL;)
    {
      size_t k = 0;
      while (k < N_ELEMENTS (order) && strcmp (kind, order[k]) != 0)
        k++;
      ok = k < N_ELEMENTS (order) && k >= rank && take_record (&r, kind, e, &n_env);
      rank = k;
    }
  if (!ok || r.at != r.len)
    {
      *why = "a record is truncated, unknown or out of order";
      return -1;
    }
  return 0;
}

void
cdi_edits_clear (struct cdi_edits *e)
{
  strv_free (e->env);
  for (size_t i = 0; i < e->n_nodes; i++)
    {
      free (e->nodes[i].host);
      free (e->nodes[i].path);
    }
  free (e->nodes);
  for (size_t i = 0; i < e->n_mounts; i++)
    {
      char *owned[] = { e->mounts[i].host, e->mounts[i].path, e->mounts[i].options };
      free_strings (owned, N_ELEMENTS (owned));
    }
  free (e->mounts);
  for (size_t i = 0; i < e->n_hooks; i++)
    {
      struct cdi_hook *h = &e->hooks[i];
      char *owned[] = { h->stage, h->spec, h->path };
      free_strings (owned, N_ELEMENTS (owned));
      strv_free (h->args);
      strv_free (h->env);
    }
  free (e->hooks);
  *e = (struct cdi_edits) { 0 };
}

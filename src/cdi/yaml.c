/* YAML specs into jansson trees (see yaml.h), from libyaml's events: the parser keeps its
 * own state on the heap, and the tree is built here with an explicit stack, so that no
 * depth of the input becomes depth of the C stack. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cdi/yaml.h"
#include "common/util.h"

struct builder
{
  json_t *stack[YAML_DEPTH_MAX + 1]; /* the open mappings and sequences, outermost first */
  size_t depth;
  char *key;       /* a mapping's key waiting for its value */
  json_t *root;
  int documents;
  char *error;
};

__attribute__((format (printf, 3, 4))) static int
fail (struct builder *b, const yaml_event_t *ev, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  cleanup_free char *msg = xvasprintf (format, args);
  va_end (args);
  b->error = xasprintf ("line %zu: %s", (size_t) ev->start_mark.line + 1, msg);
  return -1;
}

static bool
is_one_of (const char *s, const char *const *words)
{
  for (; *words != NULL; words++)
    if (strcmp (s, *words) == 0)
      return true;
  return false;
}

/* DIGITS in BASE as an integer into *V; false when they are not one, or do not fit. */
static bool
parse_int (const char *s, int base, const char *digits, json_int_t *v)
{
  bool negative = base == 10 && s[0] == '-';
  if (base == 10 && (s[0] == '-' || s[0] == '+'))
    s++;
  if (s[0] == '\0' || strspn (s, digits) != strlen (s))
    return false;
  errno = 0;
  uintmax_t u = strtoumax (s, NULL, base);
  if (errno != 0 || u > (uintmax_t) INT64_MAX + (negative ? 1 : 0))
    return false;
  *v = negative ? (json_int_t) (0 - u) : (json_int_t) u;
  return true;
}

static bool
is_float (const char *s)
{
  if (is_one_of (s, (const char *const[]) { ".inf", "-.inf", "+.inf", ".Inf", "-.Inf", "+.Inf",
                                            ".INF", "-.INF", "+.INF", ".nan", ".NaN", ".NAN",
                                            NULL }))
    return true;
  const char *p = s + (s[0] == '-' || s[0] == '+');
  size_t whole = strspn (p, "0123456789");
  p += whole;
  size_t fraction = 0;
  if (*p == '.')
    {
      fraction = strspn (p + 1, "0123456789");
      p += 1 + fraction;
    }
  if (whole + fraction == 0)
    return false;
  if (*p == 'e' || *p == 'E')
    {
      p += 1 + (p[1] == '-' || p[1] == '+');
      size_t exp = strspn (p, "0123456789");
      if (exp == 0)
        return false;
      p += exp;
    }
  return *p == '\0';
}

/* A plain scalar, as YAML 1.2's core schema resolves it. */
static json_t *
plain_scalar (const char *s)
{
  static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
  static const char *const trues[] = { "true", "True", "TRUE", NULL };
  static const char *const falses[] = { "false", "False", "FALSE", NULL };
  json_int_t v;
  if (is_one_of (s, nulls))
    return json_null ();
  if (is_one_of (s, trues))
    return json_true ();
  if (is_one_of (s, falses))
    return json_false ();
  if (parse_int (s, 10, "0123456789", &v)
      || (str_has_prefix (s, "0o") && parse_int (s + 2, 8, "01234567", &v))
      || (str_has_prefix (s, "0x") && parse_int (s + 2, 16, "0123456789abcdefABCDEF", &v)))
    return json_integer (v);
  if (is_float (s))
    return json_real (strtod (s, NULL));
  return json_string (s);
}

/* The core schema's tags, which say what a scalar or collection is, as untagged ones are. */
static bool
tag_allowed (const yaml_char_t *tag, const char *const *allowed)
{
  return tag == NULL || strcmp ((const char *) tag, "!") == 0
         || is_one_of ((const char *) tag, allowed);
}

static json_t *
scalar_value (struct builder *b, const yaml_event_t *ev)
{
  const char *s = (const char *) ev->data.scalar.value;
  size_t len = ev->data.scalar.length;
  const char *tag = (const char *) ev->data.scalar.tag;
  static const char *const scalar_tags[] = {
    YAML_STR_TAG, YAML_INT_TAG, YAML_BOOL_TAG, YAML_NULL_TAG, YAML_FLOAT_TAG, NULL,
  };
  if (!tag_allowed (ev->data.scalar.tag, scalar_tags))
    {
      fail (b, ev, "the tag %s is not accepted", tag);
      return NULL;
    }
  if (memchr (s, '\0', len) != NULL)
    {
      fail (b, ev, "a NUL byte in a value");
      return NULL;
    }
  /* A quoted scalar, or one tagged "!" or as a string, is a string; the other core tags
   * name what the plain scalar resolves to anyway. */
  bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  bool string = tag != NULL ? strcmp (tag, "!") == 0 || strcmp (tag, YAML_STR_TAG) == 0 : !plain;
  json_t *v = string ? json_stringn (s, len) : plain_scalar (s);
  if (v == NULL)
    fail (b, ev, "a value that is not UTF-8");
  return v;
}

/* V (a new reference) into the innermost open collection, or as the document. */
static int
add_value (struct builder *b, const yaml_event_t *ev, json_t *v)
{
  if (b->depth == 0)
    {
      b->root = v;
      return 0;
    }
  json_t *parent = b->stack[b->depth - 1];
  if (json_is_array (parent))
    return json_array_append_new (parent, v) == 0 ? 0 : fail (b, ev, "out of memory");
  cleanup_free char *key = steal_pointer (&b->key);
  if (json_object_get (parent, key) != NULL)
    {
      json_decref (v);
      return fail (b, ev, "the key '%s' is given twice", str_one_line (key));
    }
  return json_object_set_new (parent, key, v) == 0 ? 0 : fail (b, ev, "a key that is not UTF-8");
}

static int
on_scalar (struct builder *b, const yaml_event_t *ev)
{
  if (ev->data.scalar.anchor != NULL)
    return fail (b, ev, "anchors and aliases are not accepted");
  bool is_key = b->depth > 0 && json_is_object (b->stack[b->depth - 1]) && b->key == NULL;
  if (is_key)
    {
      const char *s = (const char *) ev->data.scalar.value;
      if (memchr (s, '\0', ev->data.scalar.length) != NULL)
        return fail (b, ev, "a NUL byte in a key");
      b->key = xstrdup (s);
      return 0;
    }
  json_t *v = scalar_value (b, ev);
  return v == NULL ? -1 : add_value (b, ev, v);
}

static int
on_start (struct builder *b, const yaml_event_t *ev, bool mapping)
{
  const yaml_char_t *anchor = mapping ? ev->data.mapping_start.anchor
                                      : ev->data.sequence_start.anchor;
  const yaml_char_t *tag = mapping ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
  if (anchor != NULL)
    return fail (b, ev, "anchors and aliases are not accepted");
  static const char *const map_tags[] = { YAML_MAP_TAG, NULL };
  static const char *const seq_tags[] = { YAML_SEQ_TAG, NULL };
  if (!tag_allowed (tag, mapping ? map_tags : seq_tags))
    return fail (b, ev, "the tag %s is not accepted", (const char *) tag);
  if (b->depth > 0 && json_is_object (b->stack[b->depth - 1]) && b->key == NULL)
    return fail (b, ev, "a key that is not a scalar");
  if (b->depth == YAML_DEPTH_MAX)
    return fail (b, ev, "nested more than %d deep", YAML_DEPTH_MAX);
  json_t *c = mapping ? json_object () : json_array ();
  if (c == NULL)
    return fail (b, ev, "out of memory");
  if (add_value (b, ev, json_incref (c)) < 0)
    {
      json_decref (c);
      return -1;
    }
  b->stack[b->depth++] = c;
  return 0;
}

static int
on_event (struct builder *b, const yaml_event_t *ev)
{
  switch (ev->type)
    {
    case YAML_DOCUMENT_START_EVENT:
      return ++b->documents > 1 ? fail (b, ev, "more than one document") : 0;
    case YAML_ALIAS_EVENT:
      return fail (b, ev, "anchors and aliases are not accepted");
    case YAML_SCALAR_EVENT:
      return on_scalar (b, ev);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
      return on_start (b, ev, ev->type == YAML_MAPPING_START_EVENT);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      json_decref (b->stack[--b->depth]);
      return 0;
    default:
      return 0;
    }
}

int
yaml_to_json (const char *text, size_t len, json_t **out, char **error)
{
  yaml_parser_t parser;
  if (!yaml_parser_initialize (&parser))
    die ("out of memory");
  yaml_parser_set_input_string (&parser, (const unsigned char *) text, len);
  struct builder b = { 0 };
  bool done = false;
  while (!done && b.error == NULL)
    {
      yaml_event_t ev;
      if (!yaml_parser_parse (&parser, &ev))
        {
          b.error = xasprintf ("line %zu: %s%s%s", (size_t) parser.problem_mark.line + 1,
                               parser.problem != NULL ? parser.problem : "not YAML",
                               parser.context != NULL ? " " : "",
                               parser.context != NULL ? parser.context : "");
          break;
        }
      done = ev.type == YAML_STREAM_END_EVENT;
      on_event (&b, &ev);
      yaml_event_delete (&ev);
    }
  yaml_parser_delete (&parser);
  while (b.depth > 0)
    json_decref (b.stack[--b.depth]);
  free (b.key);
  if (b.error == NULL && b.root == NULL)
    b.error = xstrdup ("no document");
  if (b.error != NULL)
    {
      json_decref (b.root);
      *error = str_one_line (b.error);
      return -1;
    }
  *out = b.root;
  return 0;
}

/* Splitting the Actions runner's step arguments as the reference docker hook does
 * (shlex.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ci/shlex.h"
#include "common/util.h"

static bool
is_space (char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Append code point CP as UTF-8; false for none (a surrogate, past U+10FFFF). */
static bool
append_utf8 (struct strbuf *sb, uint32_t cp)
{
  if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return false;
  if (cp < 0x80)
    strbuf_append_c (sb, (char) cp);
  else if (cp < 0x800)
    {
      strbuf_append_c (sb, (char) (0xc0 | (cp >> 6)));
      strbuf_append_c (sb, (char) (0x80 | (cp & 0x3f)));
    }
  else if (cp < 0x10000)
    {
      strbuf_append_c (sb, (char) (0xe0 | (cp >> 12)));
      strbuf_append_c (sb, (char) (0x80 | ((cp >> 6) & 0x3f)));
      strbuf_append_c (sb, (char) (0x80 | (cp & 0x3f)));
    }
  else
    {
      strbuf_append_c (sb, (char) (0xf0 | (cp >> 18)));
      strbuf_append_c (sb, (char) (0x80 | ((cp >> 12) & 0x3f)));
      strbuf_append_c (sb, (char) (0x80 | ((cp >> 6) & 0x3f)));
      strbuf_append_c (sb, (char) (0x80 | (cp & 0x3f)));
    }
  return true;
}

/* The escape after a backslash at *P inside $'...' (bash's ANSI-C quoting): appended to SB,
 * *P advanced past it. False with *WHY for one that makes a NUL byte or no character. */
static bool
ansi_c_escape (const char **p, struct strbuf *sb, const char **why)
{
  const char *s = *p;
  char c = *s++;
  static const char simple_from[] = "abeEfnrtv\\'\"?";
  static const char simple_to[] = "\a\b\033\033\f\n\r\t\v\\'\"?";
  const char *k = c != '\0' ? strchr (simple_from, c) : NULL;
  uint32_t v = 0;
  int digits = 0;
  if (k != NULL)
    v = (unsigned char) simple_to[k - simple_from];
  else if (c >= '0' && c <= '7')
    {
      v = (uint32_t) (c - '0');
      for (digits = 1; digits < 3 && *s >= '0' && *s <= '7'; digits++)
        v = v * 8 + (uint32_t) (*s++ - '0');
      v &= 0xff;
    }
  else if (c == 'x' || c == 'u' || c == 'U')
    {
      int max = c == 'x' ? 2 : c == 'u' ? 4 : 8;
      for (; digits < max && hex_value (*s) >= 0; digits++)
        v = v * 16 + (uint32_t) hex_value (*s++);
      if (digits == 0)
        {
          /* No digits: kept as it is, as bash does. */
          strbuf_append_c (sb, '\\');
          strbuf_append_c (sb, c);
          *p = s;
          return true;
        }
      if (c != 'x')
        {
          if (v == 0 || !append_utf8 (sb, v))
            {
              *why = "a $'...' escape names no character";
              return false;
            }
          *p = s;
          return true;
        }
    }
  else if (c == 'c' && *s != '\0')
    {
      char x = *s++;
      v = x == '?' ? 0x7f : (uint32_t) ((unsigned char) x & 0x1f);
    }
  else
    {
      /* Not an escape: the backslash stays (C is no NUL: the caller checked). */
      strbuf_append_c (sb, '\\');
      strbuf_append_c (sb, c);
      *p = s;
      return true;
    }
  if (v == 0)
    {
      *why = "a $'...' escape makes a NUL byte, which no argument can hold";
      return false;
    }
  strbuf_append_c (sb, (char) v);
  *p = s;
  return true;
}

char **
ci_shlex_split (const char *text, const char **why)
{
  char **words = xcalloc (1, sizeof *words);
  size_t n = 0;
  struct strbuf word = { 0 };
  bool in_word = false;
  const char *p = text;
  for (;;)
    {
      char c = *p;
      if (c == '\0' || is_space (c))
        {
          if (in_word)
            {
              words = xrealloc (words, (n + 2) * sizeof *words);
              words[n++] = strbuf_steal (&word);
              words[n] = NULL;
              in_word = false;
            }
          if (c == '\0')
            return words;
          p++;
          continue;
        }
      if (c == '\\')
        {
          if (p[1] == '\0')
            {
              *why = "a backslash at the end";
              goto fail;
            }
          /* A backslash before a newline drops both, and makes no word. */
          if (p[1] != '\n')
            {
              strbuf_append_c (&word, p[1]);
              in_word = true;
            }
          p += 2;
          continue;
        }
      in_word = true;
      /* $'...' and $"...": an unquoted, unescaped $ before a quote. */
      bool dollar = c == '$' && (p[1] == '\'' || p[1] == '"');
      if (dollar)
        c = *++p;
      bool ansi_c = dollar && c == '\'';
      if (c == '\'' && !ansi_c)
        {
          const char *end = strchr (p + 1, '\'');
          if (end == NULL)
            {
              *why = "a ' is not closed";
              goto fail;
            }
          strbuf_append_len (&word, p + 1, (size_t) (end - p - 1));
          p = end + 1;
          continue;
        }
      if (c == '\'' || c == '"')
        {
          char quote = c;
          for (p++;; p++)
            {
              if (*p == '\0' || (*p == '\\' && p[1] == '\0'))
                {
                  *why = quote == '"' ? "a \" is not closed" : "a $' is not closed";
                  goto fail;
                }
              if (*p == quote)
                break;
              if (*p != '\\')
                {
                  strbuf_append_c (&word, *p);
                  continue;
                }
              if (p[1] == '\n')
                {
                  p++;
                  continue;
                }
              if (quote == '\'')
                {
                  p++;
                  if (!ansi_c_escape (&p, &word, why))
                    goto fail;
                  p--;
                  continue;
                }
              if (p[1] == '"' || p[1] == '\\')
                p++;
              strbuf_append_c (&word, *p);
            }
          p++;
          continue;
        }
      strbuf_append_c (&word, c);
      p++;
    }
fail:
  free (strbuf_steal (&word));
  strv_free (words);
  return NULL;
}

/* A one-line progress bar on stderr (see progress.h). */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "store/progress.h"

#define PROGRESS_INTERVAL_NS 200000000L
#define PROGRESS_BAR_WIDTH 24
#define NS_PER_S 1000000000L

char *
format_bytes (uint64_t bytes)
{
  const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  double v = (double) bytes;
  size_t u = 0;
  while (v >= 1024 && u + 1 < N_ELEMENTS (units))
    v /= 1024, u++;
  return u == 0 ? xasprintf ("%ju B", (uintmax_t) bytes) : xasprintf ("%.1f %s", v, units[u]);
}

static long
ns_between (const struct timespec *a, const struct timespec *b)
{
  return (b->tv_sec - a->tv_sec) * NS_PER_S + (b->tv_nsec - a->tv_nsec);
}

static void
draw (struct progress *p, bool final)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  double elapsed = (double) ns_between (&p->start, &now) / NS_PER_S;
  uint64_t counted = p->now > p->base ? p->now - p->base : 0;
  double rate = elapsed > 0 ? (double) counted / elapsed : 0;
  cleanup_free char *done = format_bytes (p->now);
  cleanup_free char *speed = format_bytes ((uint64_t) rate);
  struct strbuf sb = { 0 };
  strbuf_appendf (&sb, "\r%s  ", p->label);
  if (p->total > 0)
    {
      uint64_t shown = p->now < p->total ? p->now : p->total;
      unsigned filled = (unsigned) ((double) shown / (double) p->total * PROGRESS_BAR_WIDTH);
      cleanup_free char *total = format_bytes (p->total);
      strbuf_append_c (&sb, '[');
      for (unsigned i = 0; i < PROGRESS_BAR_WIDTH; i++)
        strbuf_append_c (&sb, i < filled ? '=' : i == filled ? '>' : ' ');
      strbuf_appendf (&sb, "] %3u%%  %s / %s  %s/s",
                      (unsigned) (100.0 * (double) shown / (double) p->total), done, total, speed);
      if (rate > 0 && !final)
        {
          unsigned long s = (unsigned long) ((double) (p->total - shown) / rate);
          strbuf_appendf (&sb, "  ETA %lu:%02lu", s / 60, s % 60);
        }
    }
  else
    strbuf_appendf (&sb, "%s  %s/s", done, speed);
  strbuf_append (&sb, final ? "\033[K\n" : "\033[K");
  cleanup_free char *line = strbuf_steal (&sb);
  fputs (line, stderr);
  fflush (stderr);
  stderr_mid_line = !final;
  p->drawn = true;
  p->last = now;
}

void
progress_begin (struct progress *p, bool enabled, const char *label, uint64_t total,
                uint64_t base)
{
  *p = (struct progress) { .enabled = enabled, .label = label, .total = total, .base = base,
                           .now = base };
  clock_gettime (CLOCK_MONOTONIC, &p->start);
  /* So that the first update draws: a bar that appears late looks like a hang. */
  p->last = p->start;
  p->last.tv_sec -= 1;
}

void
progress_update (struct progress *p, uint64_t now, uint64_t total)
{
  if (!p->enabled)
    return;
  p->now = now;
  if (total > 0)
    p->total = total;
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  if (ns_between (&p->last, &t) >= PROGRESS_INTERVAL_NS)
    draw (p, false);
}

void
progress_advance (uint64_t n, void *data)
{
  struct progress *p = data;
  progress_update (p, p->now + n, 0);
}

void
progress_end (struct progress *p)
{
  if (p->enabled && p->drawn)
    draw (p, true);
  p->enabled = false;
}

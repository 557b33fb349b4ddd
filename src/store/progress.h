/* A one-line progress bar on stderr for downloads and unpacking:
 *   label  [=========>              ]  38%  9.5 MiB / 25.0 MiB  3.1 MiB/s  ETA 0:05
 * Callers decide whether to show one (a terminal, no --quiet); a disabled bar is inert. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct progress
{
  bool enabled;
  bool drawn;
  const char *label;
  uint64_t total;  /* 0: unknown, no bar, no ETA */
  uint64_t base;   /* bytes that were there before this run: not counted in the rate */
  uint64_t now;
  struct timespec start, last;
};

void progress_begin (struct progress *p, bool enabled, const char *label, uint64_t total,
                     uint64_t base);
/* Set the count (and the total when it becomes known); redraws at most 5 times a second. */
void progress_update (struct progress *p, uint64_t now, uint64_t total);
/* Add N bytes: a callback for extract_opts.progress, DATA being the struct progress. */
void progress_advance (uint64_t n, void *data);
/* Draw the final state and end the line, if anything was drawn. */
void progress_end (struct progress *p);

/* "512 B", "1.5 MiB": for people, not for parsing. */
char *format_bytes (uint64_t bytes);

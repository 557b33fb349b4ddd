/* Interrupting a long command leaves nothing behind.
 *
 * A signal handler can do nothing useful about a half-unpacked tree (removing it needs
 * malloc and a directory walk), so the handlers only record the signal; the loops that
 * take time (reading the archive, writing a download, cloning a copy, hashing a file) call
 * interrupt_check(), which undoes what a failure undoes (die()'s cleanup: the staging
 * directory, the metadata) and exits 128+signal with one line, as a shell reports a
 * command killed by it. The handlers are installed without SA_RESTART, so a read from a
 * pipe or a slow disk returns EINTR to its loop at once instead of waiting for data.
 *
 * Once the root is renamed into place (interrupt_commit), the command has succeeded: a
 * signal arriving later is recorded and ignored, and the exit status is 0, because the
 * root exists. What follows the rename (keeping an unpacked copy) is short and optional. */
#include <signal.h>
#include <string.h>

#include "common/util.h"
#include "store/interrupt.h"

/* 128 + N is how a shell reports a command ended by signal N. */
#define EXIT_SIGNAL_BASE 128

static const int caught_signals[] = { SIGINT, SIGTERM, SIGHUP };
static volatile sig_atomic_t caught;
static bool committed;

static void
record_signal (int sig)
{
  caught = sig;
}

void
interrupt_install (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = record_signal;
  sigemptyset (&sa.sa_mask);
  sigset_t set;
  sigemptyset (&set);
  for (size_t i = 0; i < N_ELEMENTS (caught_signals); i++)
    {
      if (sigaction (caught_signals[i], &sa, NULL) < 0)
        die_with_error ("cannot catch signal %d", caught_signals[i]);
      sigaddset (&set, caught_signals[i]);
    }
  /* enter-devroot blocked them before exec'ing us (src/common/helper.c): one that came
   * in between is delivered now, and recorded. */
  if (sigprocmask (SIG_UNBLOCK, &set, NULL) < 0)
    die_with_error ("cannot unblock the interrupt signals");
}

int
interrupt_pending (void)
{
  return committed ? 0 : caught;
}

void
interrupt_check_note (const char *note)
{
  int sig = interrupt_pending ();
  if (sig != 0)
    die_status (EXIT_SIGNAL_BASE + sig, "interrupted: nothing created%s", note);
}

void
interrupt_check (void)
{
  interrupt_check_note ("");
}

void
interrupt_commit (void)
{
  committed = true;
}

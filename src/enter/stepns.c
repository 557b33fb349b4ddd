/* The namespaces a Slurm job step's tasks share on a node (stepns.h).
 *
 * A namespace lives as long as a process in it, and a PID namespace dies with its PID 1.
 * So the first task to arrive starts a keeper: a process cloned into new user, mount and
 * PID namespaces that builds the root's view there (what a task's own PID 1 would), drops
 * its capabilities and then only reaps, as PID 1. Every task, the first included, has its
 * job's child enter the keeper's namespaces through a pidfd (one setns(2), atomic) and
 * chroot into the root again, then run the command as it would in namespaces of its own.
 *
 * Who ends the keeper: the state file, locks/ROOT@STEP.ns, names it by PID and start time
 * (a PID alone could have been reused) and counts the tasks in its namespaces, under its
 * own exclusive lock. The task that leaves last kills the keeper and waits until the PID
 * namespace is gone (every process the step's tasks left in it included) before its run
 * goes on to remove a throwaway root. A task killed with SIGKILL never leaves, so for that
 * the keeper has a parent outside, the holder: each task holds locks/ROOT@STEP.nshold
 * shared while it runs, the kernel drops the lock of a task however it dies, and the
 * holder waits for that lock exclusively, then kills the keeper itself. A task that finds
 * the keeper recorded gone starts a new one. The lock files are removed by whoever ends
 * the keeper; a task that opened the state just before its removal sees that the path no
 * longer names its file and opens it again.
 *
 * Warm runs (stepns_warm_init) share the same machinery for a root entered again and
 * again by `run`: the state is locks/ROOT@warm-KEY.ns, KEY a hash of everything that makes
 * the view (warm_key, warm-key.c: the root's directory, the binds, --root, --no-host-dns and
 * the identity of each mount point), so a run never joins a view it did not ask for. No run
 * kills the keeper: the holder does, once no run has held the hold lock for the idle time
 * (a generation counter in the state, bumped by every run that joins, tells it whether one
 * came and went meanwhile); `remove` kills it first (inuse_stop_keepers). A run joins the
 * keeper's user and mount namespaces only: its command gets a PID namespace of its own
 * there (job.c), which ends with it, so nothing of a run is ever left to the keeper.
 *
 * An overlay root's holder (stepns_root_init) is such a keeper too, with no view but the
 * root's one overlay mount: keepers of the root are cloned in its user and mount namespaces
 * (BASE_FD), and their holders keep its hold lock (BASE_HOLD_FD) while they live. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/inuse.h"
#include "common/paths.h"
#include "common/util.h"
#include "common/verbose.h"
#include "enter/pidns.h"
#include "enter/slurmstep.h"
#include "enter/stepns.h"

/* How long the last task waits for the PID namespace to empty after SIGKILL. */
#define KEEPER_DEATH_WAIT_MS 10000
/* The holder's pause before trying again when a task holds the state lock. */
#define HOLDER_RETRY_US 20000
/* The fds the holder keeps while it sets the keeper up; the root holder's, where the keeper
 * is made in its namespaces (the hold fd for the holder's whole life). */
#define HOLDER_PID_FD 3
#define KEEPER_READY_FD 4
#define BASE_FD 5
#define BASE_HOLD_FD 6
/* A warm keeper's idle time unless configured (ENTER_DEVROOT_KEEP_IDLE, keep-idle), and
 * the most it can be set to (a day). */
#define WARM_IDLE_DEFAULT 10
#define WARM_IDLE_MAX 86400

static int
sys_pidfd_open (pid_t pid)
{
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

/* Whether this kernel has pidfds (Linux 5.3), which a keeper and each run joining it rely
 * on; without them (an older kernel, or valgrind, which does not know the call) every run
 * makes namespaces of its own, as a first run does. */
static bool
pidfds_work (void)
{
  static int known = -1;
  if (known < 0)
    {
      int fd = sys_pidfd_open (getpid ());
      known = fd >= 0;
      if (fd >= 0)
        close (fd);
      else
        verbose ("pidfd_open: %s: namespaces are not shared between runs", strerror (errno));
    }
  return known;
}

/* Take an exclusive (or shared) lock on PATH's file, opening it again if the path was
 * removed or replaced in between; the fd is returned, or -1 with errno when it cannot be
 * opened (made, on a full disk). */
static int
lock_path (const char *path, int operation)
{
  for (;;)
    {
      int fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        return -1;
      step_file_lock (fd, operation, path);
      struct stat a, b;
      if (fstat (fd, &a) == 0 && stat (path, &b) == 0 && a.st_dev == b.st_dev
          && a.st_ino == b.st_ino)
        return fd;
      close (fd);
    }
}

/* Remove PATH if it still names the file open at FD. */
static void
unlink_if_same (const char *path, int fd)
{
  struct stat a, b;
  if (fstat (fd, &a) == 0 && stat (path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    unlink (path);
}

bool
stepns_from_env (const char *root_name, struct stepns *ns)
{
  struct step_share s;
  *ns = (struct stepns) { .state_fd = -1, .hold_fd = -1, .keeper_fd = -1, .base_fd = -1,
                          .base_hold_fd = -1 };
  if (getenv ("ENTER_DEVROOT_STEP_PRIVATE") != NULL || !pidfds_work ()
      || !step_share_from_env (&s, NULL))
    return false;
  struct store_paths p;
  store_paths_from_env (&p);
  ns->state_path = xasprintf ("%s/%s@%s.ns", p.locks, root_name, s.name);
  ns->hold_path = xasprintf ("%s/%s@%s.nshold", p.locks, root_name, s.name);
  store_paths_clear (&p);
  step_share_clear (&s);
  return true;
}

/* The idle time from VALUE (SOURCE names it for the error): whole seconds, 0 = off. */
static unsigned
parse_idle (const char *value, const char *source)
{
  char *end;
  errno = 0;
  unsigned long v = strtoul (value, &end, 10);
  if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0 || v > WARM_IDLE_MAX)
    die ("%s '%s': expected whole seconds from 0 (off) to %d", source, value, WARM_IDLE_MAX);
  return (unsigned) v;
}

unsigned
stepns_warm_idle (void)
{
  const char *env = getenv ("ENTER_DEVROOT_KEEP_IDLE");
  if (env != NULL && env[0] != '\0')
    return parse_idle (env, "ENTER_DEVROOT_KEEP_IDLE");
  /* "keep-idle = SECONDS" in the config file (the store reads the other keys and warns
   * about unknown ones). */
  cleanup_free char *path = NULL;
  cleanup_free char *v = paths_config_value ("keep-idle", &path);
  if (v == NULL)
    return WARM_IDLE_DEFAULT;
  cleanup_free char *source = xasprintf ("%s: keep-idle =", path);
  return parse_idle (v, source);
}

/* NS for the keeper whose state is locks/ROOT_NAME@warm-WHAT.ns, kept IDLE seconds. */
static bool
kept_init (const char *root_name, const char *what, unsigned idle, struct stepns *ns)
{
  *ns = (struct stepns) { .state_fd = -1, .hold_fd = -1, .keeper_fd = -1, .idle = idle,
                          .base_fd = -1, .base_hold_fd = -1 };
  if (!pidfds_work ())
    return false;
  struct store_paths p;
  store_paths_from_env (&p);
  struct stat st;
  bool ok = stat (p.locks, &st) == 0 && S_ISDIR (st.st_mode) && st.st_uid == getuid ();
  if (ok)
    {
      ns->state_path = xasprintf ("%s/%s" KEEPER_WARM_INFIX "%s.ns", p.locks, root_name, what);
      ns->hold_path = xasprintf ("%shold", ns->state_path);
    }
  store_paths_clear (&p);
  return ok;
}

bool
stepns_warm_init (const char *root_name, uint64_t key, unsigned idle, struct stepns *ns)
{
  char hex[17];
  snprintf (hex, sizeof hex, "%016" PRIx64, key);
  return kept_init (root_name, hex, idle, ns);
}

bool
stepns_root_init (const char *root_name, unsigned idle, struct stepns *ns)
{
  bool ok = kept_init (root_name, KEEPER_ROOT, idle, ns);
  ns->bare = true;
  return ok;
}

/* The state: the keeper's PID and start time, how many tasks are in its namespaces, and
 * (warm) how many runs ever joined them. */
struct state
{
  int pid;
  uint64_t started;
  unsigned tasks;
  uint64_t generation;
};

static void
state_read_fd (int fd, const char *path, struct state *st)
{
  char buf[STEP_STATE_MAX + 1];
  size_t n = step_file_read (fd, path, buf);
  *st = (struct state) { 0 };
  if (n > 0 && (sscanf (buf, "%d %" SCNu64 " %u %" SCNu64, &st->pid, &st->started, &st->tasks,
                        &st->generation) != 4
                || st->pid <= 1))
    *st = (struct state) { 0 }; /* malformed: as if no keeper were recorded */
}

static void
state_read (const struct stepns *ns, struct state *st)
{
  state_read_fd (ns->state_fd, ns->state_path, st);
}

/* Written in place, padded to a fixed size with spaces (which the reading skips), never
 * truncated: on ext4, truncating a file to zero and writing it again makes the next close
 * flush its data (auto_da_alloc), which costs a warm run a millisecond. Only a new file's
 * first write needs space: -1 with errno when there is none. */
static int
state_write (const struct stepns *ns, const struct state *st)
{
  char buf[STEP_STATE_MAX];
  int n = snprintf (buf, sizeof buf, "%d %" PRIu64 " %u %" PRIu64, st->pid, st->started,
                    st->tasks, st->generation);
  if (n < 0 || n > (int) sizeof buf - 2)
    die ("%s: state too long", ns->state_path);
  memset (buf + n, ' ', sizeof buf - 1 - (size_t) n);
  buf[sizeof buf - 1] = '\n';
  ssize_t w = pwrite (ns->state_fd, buf, sizeof buf, 0);
  if (w == (ssize_t) sizeof buf)
    return 0;
  if (w >= 0)
    errno = ENOSPC;
  return -1;
}

/* The keeper recorded in the state, if it still runs: a pidfd of it is kept. */
static bool
keeper_alive (struct stepns *ns, const struct state *st)
{
  if (st->pid <= 1 || st->started == 0)
    return false;
  int fd = sys_pidfd_open (st->pid);
  if (fd < 0)
    return false;
  /* Checked once the pidfd pins the process: it is the keeper, not a reuse of its PID, and
   * it is ours (a state file naming another user's process is a keeper gone: setns would
   * refuse it anyway, for want of capabilities over its namespaces). */
  char proc[64];
  struct stat pst;
  snprintf (proc, sizeof proc, "/proc/%d", st->pid);
  if (inuse_start_time (st->pid) != st->started || stat (proc, &pst) < 0 || pst.st_uid != getuid ())
    {
      close (fd);
      return false;
    }
  ns->keeper = st->pid;
  ns->keeper_fd = fd;
  return true;
}

/* PID 1 of the shared namespaces: reap whatever the tasks leave to it, forever (its
 * holder, or the last task, kills it). */
__attribute__((noreturn)) static void
keeper_loop (void)
{
  sigset_t chld;
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  sigprocmask (SIG_BLOCK, &chld, NULL);
  for (;;)
    {
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
      sigwaitinfo (&chld, NULL);
    }
}

static void
stdio_to_null (void)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0)
    return;
  dup2 (null, STDIN_FILENO);
  dup2 (null, STDOUT_FILENO);
  dup2 (null, STDERR_FILENO);
  close (null);
}

/* Take LOCK_EX on FD without waiting; whether it was taken. */
static bool
try_lock (int fd)
{
  return flock (fd, LOCK_EX | LOCK_NB) == 0;
}

/* A warm keeper's holder: return once no run has been in the namespaces, nor joined them,
 * for NS->idle seconds (both locks then held, so that none joins before the keeper is
 * killed and the state removed), or once the keeper is gone (`remove` killed it). */
static void
holder_wait_idle (const struct stepns *ns, pid_t keeper, int hold, int state)
{
  int keeper_fd = sys_pidfd_open (keeper);
  if (keeper_fd < 0)
    return;
  for (;;)
    {
      /* No run in: each holds the hold lock shared while it runs. */
      while (flock (hold, LOCK_EX) < 0)
        if (errno != EINTR)
          return;
      if (!try_lock (state))
        {
          /* A run is joining and holds the state lock: let it take the shared lock. */
          flock (hold, LOCK_UN);
          usleep (HOLDER_RETRY_US);
          continue;
        }
      struct state st;
      state_read_fd (state, ns->state_path, &st);
      if (st.pid != keeper)
        return; /* the state names another keeper (ours was found dead): ours goes */
      uint64_t generation = st.generation;
      flock (state, LOCK_UN);
      flock (hold, LOCK_UN);
      struct pollfd p = { .fd = keeper_fd, .events = POLLIN };
      int r;
      while ((r = poll (&p, 1, (int) ns->idle * 1000)) < 0 && errno == EINTR)
        ;
      if (r != 0)
        return; /* the keeper is gone */
      if (!try_lock (hold))
        continue; /* a run is in */
      if (!try_lock (state))
        {
          flock (hold, LOCK_UN);
          continue;
        }
      state_read_fd (state, ns->state_path, &st);
      if (st.pid != keeper || st.generation == generation)
        return; /* idle all along */
      flock (state, LOCK_UN);
      flock (hold, LOCK_UN);
    }
}

/* The holder, outside the namespaces: clone the keeper, pass its PID on, then wait until
 * no task holds the step's lock (or, warm, until the namespaces have been idle for
 * NS->idle seconds) and end the keeper. Signals stay blocked: a cancellation
 * reaches the tasks, and the holder goes when they have gone. */
__attribute__((noreturn)) static void
holder (const struct stepns *ns, const char *name, stepns_setup_fn setup, void *arg)
{
  bool based = ns->base_fd >= 0;
  close_fds_from (based ? BASE_HOLD_FD + 1 : KEEPER_READY_FD + 1);
  /* Made in an overlay root's holder's user and mount namespaces: its mount namespace a
   * copy of the one where the root's overlay is mounted, the same overlay. */
  if (based && setns (BASE_FD, CLONE_NEWUSER | CLONE_NEWNS) < 0)
    _exit (EXIT_TOOL_FAILURE);
  if (based)
    close (BASE_FD);
  int flags = (based ? 0 : CLONE_NEWUSER) | CLONE_NEWNS | CLONE_NEWPID;
  pid_t keeper = (pid_t) syscall (SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (keeper < 0)
    {
      /* A warm run then makes its own, and says why if that fails too. */
      if (ns->idle == 0 && !ns->bare)
        warn ("root '%s': cannot make the namespaces the step's tasks share: %s", name,
              strerror (errno));
      _exit (EXIT_TOOL_FAILURE);
    }
  if (keeper == 0)
    {
      close (HOLDER_PID_FD);
      if (based)
        close (BASE_HOLD_FD);
      if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        _exit (EXIT_TOOL_FAILURE);
      setup (arg);
      if (chdir ("/") < 0) /* nothing of the keeper's keeps the root in use */
        _exit (EXIT_TOOL_FAILURE);
      pidns_drop_capabilities (name);
      stdio_to_null ();
      if (write_all (KEEPER_READY_FD, "k", 1) < 0)
        _exit (EXIT_TOOL_FAILURE);
      close (KEEPER_READY_FD);
      keeper_loop ();
    }
  close (KEEPER_READY_FD);
  int sent = write_all (HOLDER_PID_FD, &keeper, sizeof keeper);
  close (HOLDER_PID_FD);
  if (chdir ("/") < 0 || sent < 0)
    {
      kill (keeper, SIGKILL);
      _exit (EXIT_TOOL_FAILURE);
    }
  stdio_to_null ();
  /* Opened again: the task's fds were the task's (its shared lock among them). The task
   * holds the state lock until it has recorded the keeper, so the paths are ours. */
  int hold = open (ns->hold_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  int state = open (ns->state_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (hold >= 0 && state >= 0 && ns->idle > 0)
    holder_wait_idle (ns, keeper, hold, state);
  else if (hold >= 0 && state >= 0)
    for (;;)
      {
        while (flock (hold, LOCK_EX) < 0)
          if (errno != EINTR)
            goto out;
        if (flock (state, LOCK_EX | LOCK_NB) == 0)
          break;
        /* A task is joining and holds the state lock: let it take the shared lock. */
        flock (hold, LOCK_UN);
        usleep (HOLDER_RETRY_US);
      }
out:
  kill (keeper, SIGKILL);
  while (waitpid (keeper, NULL, 0) < 0 && errno == EINTR)
    ;
  if (hold >= 0 && state >= 0)
    {
      unlink_if_same (ns->state_path, state);
      unlink_if_same (ns->hold_path, hold);
    }
  _exit (0);
}

/* Start a keeper; the state lock is held. */
static bool
start_keeper (struct stepns *ns, struct state *st, const char *name, stepns_setup_fn setup,
              void *arg)
{
  int pid_pipe[2], ready_pipe[2];
  if (pipe2 (pid_pipe, O_CLOEXEC) < 0 || pipe2 (ready_pipe, O_CLOEXEC) < 0)
    die_with_error ("cannot enter root '%s': pipe", name);
  fflush (NULL);
  pid_t h = fork ();
  if (h < 0)
    die_with_error ("cannot enter root '%s': fork", name);
  if (h == 0)
    {
      /* Out of the way first: any of them may be 3 to 6 already. */
      int pid_w = fcntl (pid_pipe[1], F_DUPFD, BASE_HOLD_FD + 1);
      int ready_w = fcntl (ready_pipe[1], F_DUPFD, BASE_HOLD_FD + 1);
      int base = ns->base_fd >= 0 ? fcntl (ns->base_fd, F_DUPFD, BASE_HOLD_FD + 1) : -1;
      int base_hold = ns->base_fd >= 0 ? fcntl (ns->base_hold_fd, F_DUPFD, BASE_HOLD_FD + 1) : -1;
      if (pid_w < 0 || ready_w < 0 || dup2 (pid_w, HOLDER_PID_FD) < 0
          || dup2 (ready_w, KEEPER_READY_FD) < 0
          || (ns->base_fd >= 0 && (base < 0 || base_hold < 0 || dup2 (base, BASE_FD) < 0
                                   || dup2 (base_hold, BASE_HOLD_FD) < 0)))
        _exit (EXIT_TOOL_FAILURE);
      holder (ns, name, setup, arg);
    }
  close (pid_pipe[1]);
  close (ready_pipe[1]);
  pid_t keeper = 0;
  char ready = 0;
  bool ok = read (pid_pipe[0], &keeper, sizeof keeper) == (ssize_t) sizeof keeper
            && read (ready_pipe[0], &ready, 1) == 1 && ready == 'k';
  close (pid_pipe[0]);
  close (ready_pipe[0]);
  if (!ok && (ns->idle > 0 || ns->bare))
    {
      /* A keeper that died setting up said why; a clone that failed is told by the run's
       * own attempt. The holder exits by itself; reaped by supervise() later. */
      ns->setup_failed = keeper > 0;
      return false;
    }
  if (!ok)
    {
      /* The holder exits by itself when its keeper failed; reaped by supervise() later. */
      warn ("root '%s': the namespaces the step's tasks share could not be set up (the line "
            "above says why): this task makes its own", name);
      return false;
    }
  uint64_t started = inuse_start_time (keeper);
  ns->keeper_fd = sys_pidfd_open (keeper);
  if ((started == 0 || ns->keeper_fd < 0) && (ns->idle > 0 || ns->bare))
    return false;
  if (started == 0 || ns->keeper_fd < 0)
    {
      warn ("root '%s': the keeper of the step's namespaces is gone: this task makes its own",
            name);
      return false;
    }
  ns->keeper = keeper;
  *st = (struct state) { .pid = keeper, .started = started, .tasks = 0,
                         .generation = st->generation };
  return true;
}

static void keeper_kill (struct stepns *ns);

/* The namespaces cannot be recorded for others to find (PATH cannot be made or written:
 * a full disk, most likely): false, and the run makes its own, which needs nothing
 * written (a user freeing space runs that way). */
static bool
unrecorded (const struct stepns *ns, const char *name, const char *path)
{
  int errsv = errno;
  if (ns->idle > 0 || ns->bare)
    verbose ("cannot record kept namespaces in %s: %s: this run makes its own", path,
             strerror (errsv));
  else
    warn ("root '%s': cannot record the namespaces the step's tasks share in %s: %s: this "
          "task makes its own", name, path, strerror (errsv));
  return false;
}

bool
stepns_enter (struct stepns *ns, const struct stepns *base, const char *name,
              stepns_setup_fn setup, void *arg)
{
  ns->base_fd = base != NULL ? base->keeper_fd : -1;
  ns->base_hold_fd = base != NULL ? base->hold_fd : -1;
  ns->state_fd = lock_path (ns->state_path, LOCK_EX);
  if (ns->state_fd < 0)
    return unrecorded (ns, name, ns->state_path);
  /* The state's path cannot go while we hold its lock, so neither can the hold file's. */
  ns->hold_fd = open (ns->hold_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (ns->hold_fd < 0)
    {
      unrecorded (ns, name, ns->hold_path);
      flock (ns->state_fd, LOCK_UN);
      return false;
    }
  step_file_lock (ns->hold_fd, LOCK_SH, ns->hold_path);
  struct state st;
  state_read (ns, &st);
  bool alive = keeper_alive (ns, &st);
  bool ok = alive || start_keeper (ns, &st, name, setup, arg);
  if (ok)
    {
      st.tasks++;
      st.generation++;
      if (state_write (ns, &st) < 0)
        {
          /* Nobody could find a keeper we did not record, and its holder ends it. */
          unrecorded (ns, name, ns->state_path);
          if (!alive)
            keeper_kill (ns);
          close (ns->keeper_fd);
          ns->keeper_fd = -1;
          ok = false;
        }
    }
  flock (ns->state_fd, LOCK_UN);
  if (!ok)
    {
      close (ns->hold_fd);
      ns->hold_fd = -1;
    }
  return ok;
}

void
stepns_join_view (const struct stepns *ns, const char *name)
{
  if (setns (ns->keeper_fd, CLONE_NEWUSER | CLONE_NEWNS) < 0)
    die_with_error ("cannot enter root '%s': cannot join the namespaces of %s", name,
                    ns->bare ? "its overlay's holder" : "its warm runs");
}

void
stepns_join (const struct stepns *ns, const char *name)
{
  if (setns (ns->keeper_fd, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
    die_with_error ("cannot enter root '%s': cannot join the namespaces of %s", name,
                    ns->idle > 0 ? "its warm runs" : "the step's other tasks");
}

/* Kill the keeper through its pidfd and wait until it, and so its PID namespace, is gone. */
static void
keeper_kill (struct stepns *ns)
{
  if (syscall (SYS_pidfd_send_signal, ns->keeper_fd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
    {
      warn ("cannot stop the step's namespaces (PID %d): %s", (int) ns->keeper, strerror (errno));
      return;
    }
  struct pollfd p = { .fd = ns->keeper_fd, .events = POLLIN };
  while (poll (&p, 1, KEEPER_DEATH_WAIT_MS) < 0 && errno == EINTR)
    ;
}

void
stepns_leave (struct stepns *ns)
{
  /* A warm keeper outlives its runs: its holder ends it once idle. So does a root holder's
   * holder, once no run and no keeper made in its namespaces holds its lock (a run leaving
   * cannot know of those). */
  if (ns->hold_fd >= 0 && (ns->idle > 0 || ns->bare))
    close (ns->hold_fd);
  else if (ns->hold_fd >= 0)
    {
      step_file_lock (ns->state_fd, LOCK_EX, ns->state_path);
      struct state st;
      state_read (ns, &st);
      /* Another task may have found our keeper dead and started a new one: not ours. */
      if (st.pid == ns->keeper && st.tasks > 1)
        {
          st.tasks--;
          (void) state_write (ns, &st); /* in place: needs no space */
        }
      else if (st.pid == ns->keeper)
        {
          keeper_kill (ns);
          unlink_if_same (ns->state_path, ns->state_fd);
          unlink_if_same (ns->hold_path, ns->hold_fd);
        }
      close (ns->hold_fd);
    }
  if (ns->state_fd >= 0)
    close (ns->state_fd);
  if (ns->keeper_fd >= 0)
    close (ns->keeper_fd);
  free (ns->state_path);
  free (ns->hold_path);
  *ns = (struct stepns) { .state_fd = -1, .hold_fd = -1, .keeper_fd = -1 };
}

/* srun, the user's own process, once per job step after the allocation and before any task
 * launches: one pull per job. A template, or a docker:// image, is fetched into the
 * (possibly shared) cache here, once, with its progress and any error on the user's
 * terminal; the nodes then only find it cached. For an image, `fetch --from` prints the
 * reference pinned to the digest its tag names now, which srun passes to the tasks in
 * their environment (PINNED_IMAGE_VAR): every node creates that very image from the cache
 * without asking the registry, even if the tag moves meanwhile. A bad image ends srun
 * here, before any task runs.
 *
 * srun hears nothing of a scancel before its tasks launch (it only learns when launching
 * them that the job's credential was revoked), so while the pull runs the plugin asks
 * slurmctld once a second whether the job still runs, and stops the pull when it does not:
 * SIGTERM, on which fetch keeps what it downloaded for the next pull to resume (then
 * SIGKILL if it has not ended after a grace period). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/wait.h>
#include <time.h>
#include <slurm/slurm.h>

#include "spank/plugin.h"

/* How often the child is looked at, and how many of those make one question to slurmctld. */
#define CHILD_POLL_NS (100 * 1000 * 1000)
#define POLLS_PER_QUESTION 10
/* From SIGTERM to SIGKILL, in polls (5 s). */
#define KILL_GRACE_POLLS 50

extern char **environ;

/* Whether slurmctld says the job is over (cancelled, or gone). A controller that does not
 * answer is no reason to stop a pull. */
static bool
job_ended (uint32_t job)
{
  int ready = slurm_job_node_ready (job);
  if (ready == READY_JOB_ERROR)
    return false;
  return ready == READY_JOB_FATAL || (ready & READY_JOB_STATE) == 0;
}

static bool
child_exited (pid_t pid)
{
  siginfo_t info = { 0 };
  while (waitid (P_PID, (id_t) pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    if (errno != EINTR)
      return true; /* nothing left to wait for: wait_enter_devroot says why */
  return info.si_pid == pid;
}

/* Wait for the pull PID; stop it when job JOB ends. Its exit status, and in *CANCELLED
 * whether the job's end stopped it. */
static int
wait_pull (pid_t pid, uint32_t job, bool *cancelled)
{
  const struct timespec poll_interval = { .tv_sec = 0, .tv_nsec = CHILD_POLL_NS };
  int polls = 0, kill_in = -1;
  *cancelled = false;
  while (!child_exited (pid))
    {
      nanosleep (&poll_interval, NULL);
      if (kill_in > 0 && --kill_in == 0)
        kill (pid, SIGKILL);
      if (!*cancelled && ++polls % POLLS_PER_QUESTION == 0 && job_ended (job))
        {
          *cancelled = true;
          kill (pid, SIGTERM);
          kill_in = KILL_GRACE_POLLS;
        }
    }
  return wait_enter_devroot (pid);
}

/* The pinned reference fetch printed: one line of a reference's characters, or false. */
static bool
read_pinned (int fd, char *buf, size_t size)
{
  size_t n = 0;
  ssize_t r;
  while (n < size - 1 && (r = read (fd, buf + n, size - 1 - n)) > 0)
    n += (size_t) r;
  buf[n] = '\0';
  if (n == 0 || buf[n - 1] != '\n' || strncmp (buf, "docker://", strlen ("docker://")) != 0)
    return false;
  buf[n - 1] = '\0';
  return strpbrk (buf, " \t\n") == NULL;
}

int
srun_local_user_init (spank_t sp)
{
  bool template = request.image != NULL && image_is_template (request.image);
  bool image = request.image != NULL
               && strncmp (request.image, "docker://", strlen ("docker://")) == 0;
  if (!template && !image)
    return 0;
  uint32_t job;
  if (spank_get_item (sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
    {
      slurm_error ("%s: cannot read the job's id", PLUGIN_NAME);
      return -1;
    }
  int out[2];
  if (pipe2 (out, O_CLOEXEC) < 0)
    {
      slurm_error ("%s: pipe: %m", PLUGIN_NAME);
      return -1;
    }
  /* Its stdout is one line: the pinned reference of an image, or of a built-in template
   * that names one; for a catalogue's template or the embedded one a path, of no use here
   * (and none on the user's terminal). */
  const char *image_argv[] = { "enter-devroot", "fetch", "--from", request.image, NULL },
             *template_argv[] = { "enter-devroot", "fetch", request.image, NULL };
  pid_t pid = spawn_enter_devroot_to (template ? template_argv : image_argv, environ, out[1]);
  close (out[1]);
  if (pid < 0)
    {
      close (out[0]);
      return -1;
    }
  bool cancelled;
  /* One line, far below a pipe's capacity: fetch never blocks on it. */
  int status = wait_pull (pid, job, &cancelled);
  char pinned[PINNED_IMAGE_MAX];
  bool got = read_pinned (out[0], pinned, sizeof pinned);
  close (out[0]);
  const char *what = template ? "template" : "image";
  if (cancelled)
    slurm_error ("%s: job %u ended while %s %s was being fetched: the fetch was stopped",
                 PLUGIN_NAME, job, what, request.image);
  else if (status != 0)
    slurm_error ("%s: cannot fetch %s %s (the line above says why)", PLUGIN_NAME, what,
                 request.image);
  if (status != 0 || cancelled)
    return -1;
  if (image && !got)
    {
      slurm_error ("%s: fetch --from %s printed no pinned reference", PLUGIN_NAME, request.image);
      return -1;
    }
  /* "IMAGE PINNED": the tasks use PINNED only for the IMAGE they were given. srun's own
   * environment is the one it sends the tasks (spank_setenv is for slurmstepd only); with
   * --export=NONE it does not reach them, and they create from the tag as given. */
  char value[2 * PINNED_IMAGE_MAX];
  if (got && (snprintf (value, sizeof value, "%s %s", request.image, pinned) >= (int) sizeof value
                || setenv (PINNED_IMAGE_VAR, value, 1) < 0))
    {
      slurm_error ("%s: cannot pass the pinned image to the tasks", PLUGIN_NAME);
      return -1;
    }
  return 0;
}

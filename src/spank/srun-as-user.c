/* srun, the user's own process, once per job step after the allocation and before any task
 * launches: one pull per job. A template is fetched into the (possibly shared) cache here,
 * once, with its progress and any error on the user's terminal; the nodes then only find it
 * cached. A bad image ends srun here, before any task runs.
 *
 * srun hears nothing of a scancel before its tasks launch (it only learns when launching
 * them that the job's credential was revoked), so while the pull runs the plugin asks
 * slurmctld once a second whether the job still runs, and stops the pull when it does not:
 * SIGTERM, on which fetch keeps what it downloaded for the next pull to resume (then
 * SIGKILL if it has not ended after a grace period). */
#include <errno.h>
#include <signal.h>
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

int
srun_local_user_init (spank_t sp)
{
  if (request.image == NULL || !image_is_template (request.image))
    return 0;
  uint32_t job;
  if (spank_get_item (sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
    {
      slurm_error ("%s: cannot read the job's id", PLUGIN_NAME);
      return -1;
    }
  const char *argv[] = { "enter-devroot", "fetch", request.image, NULL };
  /* fetch prints the cached file's path: the job's output has no use for it. */
  pid_t pid = spawn_enter_devroot (argv, environ, STDOUT_TO_STDERR);
  if (pid < 0)
    return -1;
  bool cancelled;
  int status = wait_pull (pid, job, &cancelled);
  if (cancelled)
    slurm_error ("%s: job %u ended while template %s was being fetched: the fetch was "
                 "stopped", PLUGIN_NAME, job, request.image);
  else if (status != 0)
    slurm_error ("%s: cannot fetch template %s (the line above says why)", PLUGIN_NAME,
                 request.image);
  return status == 0 && !cancelled ? 0 : -1;
}

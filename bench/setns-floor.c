/* The floor of a warm run (bench/warm-run): the least any launcher must do to run a
 * command in a root whose user, mount and PID namespaces a process already holds, the
 * work enter-devroot's warm run cannot skip. Join them through a pidfd (one setns), fork
 * (only a child is born in the joined PID namespace), chroot into the root, exec; wait.
 * No key, no lock, no init for the command, no Landlock, no seccomp, no status pipe.
 *
 * usage: setns-floor KEEPER_PID ROOT CMD [ARG...]   (a benchmark's reference, not a tool) */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc < 4)
    {
      fprintf (stderr, "usage: setns-floor KEEPER_PID ROOT CMD [ARG...]\n");
      return 2;
    }
  int pidfd = (int) syscall (SYS_pidfd_open, atoi (argv[1]), 0);
  if (pidfd < 0 || setns (pidfd, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
    {
      perror ("setns-floor: join");
      return 125;
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      if (chdir (argv[2]) < 0 || chroot (".") < 0)
        _exit (125);
      execv (argv[3], argv + 3);
      _exit (127);
    }
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) < 0)
    return 125;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

/* Run-time defaults of AddressSanitizer and UndefinedBehaviorSanitizer, linked into the
 * tool only by ./configure --enable-sanitizers. Built in rather than read from ASAN_OPTIONS
 * because the test suites run the tool as another user with a reset environment (setpriv
 * --reset-env, env -i), and the variable would not get through. ASAN_OPTIONS, when it does
 * reach the tool, still wins over these. */
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

const char *__asan_default_options (void);
const char *__ubsan_default_options (void);
int __lsan_is_turned_off (void);

const char *
__asan_default_options (void)
{
  /* Leaks at exit are findings; a crash report names the symbol (llvm-symbolizer). */
  return "detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1"
         ":check_initialization_order=1:print_summary=1";
}

const char *
__ubsan_default_options (void)
{
  return "print_stacktrace=1:halt_on_error=1";
}

/* Whether a tracer (strace, gdb) is attached: /proc/self/status's TracerPid is not 0. */
static int
traced (void)
{
  FILE *f = fopen ("/proc/self/status", "re");
  if (f == NULL)
    return 0;
  char line[256];
  int pid = 0;
  while (fgets (line, sizeof line, f) != NULL)
    if (sscanf (line, "TracerPid: %d", &pid) == 1)
      break;
  fclose (f);
  return pid != 0;
}

/* LeakSanitizer needs /proc/self/task and to ptrace the process at exit. The tool exits
 * where it cannot: inside a root without /proc after chroot (a failed exec or --workdir),
 * non-dumpable when installed set-id by mistake (it refuses to run), and under a tracer
 * (the tests that strace a create to see what it flushes), which holds the one ptrace
 * attachment a process can have. There LSan would end with a "fatal error" and status 1
 * instead of the tool's own status: skip the check in those processes only. Those exit
 * paths are checked by valgrind (tests/valgrind) and by the untraced runs of the same
 * commands. */
int
__lsan_is_turned_off (void)
{
  return access ("/proc/self/task", R_OK) != 0 || prctl (PR_GET_DUMPABLE) != 1 || traced ();
}

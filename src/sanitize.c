/* Run-time defaults of AddressSanitizer and UndefinedBehaviorSanitizer, linked into the
 * tool only by ./configure --enable-sanitizers. Built in rather than read from ASAN_OPTIONS
 * because the test suites run the tool as another user with a reset environment (setpriv
 * --reset-env, env -i), and the variable would not get through. ASAN_OPTIONS, when it does
 * reach the tool, still wins over these. */

const char *__asan_default_options (void);
const char *__ubsan_default_options (void);

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

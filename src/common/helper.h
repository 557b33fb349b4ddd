/* enter-devroot is two programs. enter-devroot itself links the C library only, so that
 * entering a root costs what chroot(8) costs: enter, run, list, path, remove, doctor, help.
 * enter-devroot-store links libarchive, libcurl and libcrypto (44 shared objects and some
 * 12,000 relocations with -z now: milliseconds per start) and does create, templates,
 * fetch and cache; enter-devroot execs it with its own argv for those. */
#pragma once

#include <signal.h>

#define STORE_HELPER_NAME "enter-devroot-store"
/* The third program: what --device needs of the CDI specs (src/cdi/main.c). */
#define CDI_HELPER_NAME "enter-devroot-cdi"

/* Where program NAME is: beside the running binary (a build tree, a copied set), else in
 * INSTALLED_DIR. Never from PATH or the environment. */
char *program_path (const char *name, const char *installed_dir);
/* Where the helper is: beside the running binary (a build tree, a copied pair), else
 * PKGLIBEXECDIR (an installed tool). Never from PATH or the environment. */
char *store_helper_path (void);
/* The same for enter-devroot-cdi. */
char *cdi_helper_path (void);
/* Block SIGINT, SIGTERM and SIGHUP (SET receives them): one arriving stays pending, for
 * the helper an exec passes it to, or until the caller unblocks them. */
void block_interrupts (sigset_t *set);
/* Exec the helper with ARGV (die()s naming the helper when it cannot run). */
__attribute__((noreturn)) void exec_store_helper (char **argv);

/* --root: root emulation for package managers, a seccomp filter and nothing else.
 *
 * apt-get, dpkg and the maintainer scripts they run refuse to start unless getuid() is 0,
 * then chown every file they unpack, switch ids (setgroups, setresuid ...), create device
 * nodes and drop capabilities; as an ordinary user each of those fails and the install
 * stops. The filter below makes the identity calls report 0 and makes the privileged calls
 * a package manager needs succeed without doing anything (charliecloud's `ch-image build
 * --force=seccomp` has the same idea, in a user namespace only). No privilege is gained:
 * the process keeps its real uid, gids and (empty) capability sets, so the kernel checks
 * every file access, signal and ptrace against the real user exactly as without --root;
 * files are created owned by the real user. The same filter runs in chroot mode (no user
 * namespace at all on the patched kernel) and in userns mode (identity-mapped), so a
 * program inside sees the same thing in both.
 *
 * Faked, each for the reason given in the man page (ROOT EMULATION):
 *   report 0:                getuid geteuid getgid getegid (and i386's *32 variants)
 *   succeed, change nothing: chown fchown lchown fchownat, setuid setgid setreuid
 *                            setregid setresuid setresgid setfsuid setfsgid setgroups
 *                            (and i386's *32 variants), capset, mknod/mknodat of a
 *                            character or block device (other file types are real)
 * Not faked: getresuid/getresgid (they write through pointers, which a filter cannot do:
 * they report the real ids), getgroups, capget, stat's owners (the real user).
 *
 * Two things a filter cannot fake are settings instead (common/rootemu-files.h): apt's
 * download sandbox checks that its switch to _apt changed the ids, and dpkg reopens each
 * unpacked file for writing to fsync it, which a file shipped read-only (0440) refuses
 * without root's DAC override. Before the filter, the settings that turn both off are
 * written into the root where apt's and dpkg's configuration directories exist, once,
 * announced on stderr; export leaves them out. Written from here, inside the root and its
 * Landlock domain, a symlink in the root can send them nowhere a program inside could not
 * write anyway. Why settings and not more emulation: the sandbox check reads getresuid(),
 * which writes through a pointer, and requires setgid(0) to fail after the switch, so only
 * per-thread credentials kept by a supervisor outside could pass it; DAC override needs a
 * capability (none in chroot mode; in a user namespace CAP_DAC_OVERRIDE would work there
 * only) or a supervisor opening files for the process outside its root and Landlock
 * domain, a confused deputy; a filter can return an errno, never a file descriptor.
 *
 * Installed after confine.c's filter (stacked: the kernel runs both and the stricter
 * answer wins), after no_new_privs and Landlock. Foreign architectures are left to
 * confine.c's filter, which kills them; x32 numbers never match here and are refused
 * there. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/rootemu-files.h"
#include "common/util.h"
#include "enter/bpf.h"
#include "enter/rootemu.h"
#include "enter/syscall-table.h"

/* One architecture's rules, entered with nothing loaded: fake the calls of
 * syscall-table.h from EDR_SYS_FAKED_FIRST on (the identity calls, whose 0 return value
 * is the id, and the privileged calls a package manager makes: success, no effect; the
 * *32 ones are i386's, which glibc uses there) where the arch has them, fake mknod (mode
 * in argument 1) and mknodat (argument 2) of devices, allow the rest. */
static void
emit_block (struct bpf_asm *a, const struct seccomp_arch *arch)
{
  bpf_label fake = bpf_label_new (a), mknod = bpf_label_new (a),
            mknodat = bpf_label_new (a), mode = bpf_label_new (a);
  int32_t nr_mknod = syscall_nr (EDR_SYS_mknod, arch);

  bpf_load (a, SECCOMP_NR);
  for (int call = EDR_SYS_FAKED_FIRST; call < EDR_SYS_COUNT; call++)
    if (syscall_nr (call, arch) != NR_NONE)
      bpf_jeq (a, (uint32_t) syscall_nr (call, arch), fake, BPF_NEXT);
  if (nr_mknod != NR_NONE)
    bpf_jeq (a, (uint32_t) nr_mknod, mknod, BPF_NEXT);
  bpf_jeq (a, (uint32_t) syscall_nr (EDR_SYS_mknodat, arch), mknodat, BPF_NEXT);
  bpf_ret (a, SECCOMP_RET_ALLOW);

  /* The mode, low 32 bits (the kernel's umode_t), then its file type. */
  if (nr_mknod != NR_NONE)
    {
      bpf_bind (a, mknod);
      bpf_load (a, ARG_LO (1));
      bpf_goto (a, mode);
    }
  bpf_bind (a, mknodat);
  bpf_load (a, ARG_LO (2));
  bpf_bind (a, mode);
  bpf_and (a, S_IFMT);
  bpf_jeq (a, S_IFCHR, fake, BPF_NEXT);
  bpf_jeq (a, S_IFBLK, fake, BPF_NEXT);
  bpf_ret (a, SECCOMP_RET_ALLOW);

  bpf_bind (a, fake);
  bpf_ret (a, SECCOMP_RET_ERRNO | 0); /* "errno 0": the call returns 0 */
}

/* Write the settings of common/rootemu-files.h that are missing, in a root whose apt or
 * dpkg configuration directory exists; one stderr line names what was written. A file
 * already there, whatever it holds, is left alone (the root's own, or ours from an earlier
 * run). Each is written under a temporary name with a dot, which neither apt nor dpkg
 * reads, and linked into place, so a concurrent --root run never reads half of it and
 * only the run that links it says so. Failing to write is a warning: the package manager
 * then fails with its own error. */
static void
write_package_manager_settings (const char *name)
{
  struct strbuf written = { 0 };
  for (size_t i = 0; i < ROOTEMU_N_FILES; i++)
    {
      const struct rootemu_file *f = &rootemu_files[i];
      cleanup_free char *dir = xstrdup (f->path);
      *strrchr (dir, '/') = '\0';
      struct stat st;
      if (stat (dir, &st) < 0 || !S_ISDIR (st.st_mode))
        continue; /* not this package manager's root */
      if (lstat (f->path, &st) == 0)
        continue;
      cleanup_atomic_file struct atomic_file out;
      int err = 0;
      if (atomic_file_open (&out, AT_FDCWD, f->path, 0644) < 0
          || write_all (out.fd, f->content, strlen (f->content)) < 0 || fchmod (out.fd, 0644) < 0
          || atomic_file_commit (&out, ATOMIC_NOREPLACE) < 0)
        err = errno;
      if (err != 0 && err != EEXIST) /* EEXIST: another run linked it first */
        warn ("root '%s': --root: cannot write %s: %s", name, f->path, strerror (err));
      if (err != 0)
        continue;
      strbuf_append (&written, written.len > 0 ? ", " : "");
      strbuf_append (&written, f->path);
    }
  cleanup_free char *list = strbuf_steal (&written);
  if (list[0] != '\0')
    fprintf (stderr, "%s: root '%s': --root wrote %s (apt downloads as root, dpkg skips "
             "fsync; export leaves them out: ROOT EMULATION in enter-devroot(1))\n",
             PROGRAM_NAME, name, list);
}

void
rootemu_install (const char *name)
{
  write_package_manager_settings (name);

  static struct bpf_asm a; /* ~40 KiB: not on the stack of the entering path */
  bpf_init (&a);
  bpf_label arch[MAX_SECCOMP_ARCHS];
  for (unsigned i = 0; i < n_seccomp_archs; i++)
    arch[i] = bpf_label_new (&a);
  seccomp_arch_switch (&a, arch, SECCOMP_RET_ALLOW); /* foreign: confine.c's filter kills it */
  for (unsigned i = 0; i < n_seccomp_archs; i++)
    {
      bpf_bind (&a, arch[i]);
      emit_block (&a, &seccomp_archs[i]);
    }
  bpf_install (&a, name, "the --root seccomp filter");
}

/* The verbs that change a root's packages, by package-manager front end. */
static const char *const apt_verbs[] = { "install", "reinstall", "remove", "purge",
                                         "upgrade", "dist-upgrade", "full-upgrade",
                                         "autoremove", "build-dep", "satisfy" };
static const char *const dpkg_verbs[] = { "-i", "--install", "-r", "--remove", "-P",
                                          "--purge", "--unpack", "--configure", "-a",
                                          "--set-selections" };

static bool
any_word_in (char *const *args, const char *const *words, size_t n_words)
{
  for (; *args != NULL; args++)
    for (size_t i = 0; i < n_words; i++)
      if (strcmp (*args, words[i]) == 0)
        return true;
  return false;
}

/* The package manager ARGV runs to change packages (apt-get, apt, aptitude or dpkg with a
 * verb above), or NULL. */
static const char *
package_change (char *const *argv)
{
  const char *slash = strrchr (argv[0], '/');
  const char *cmd = slash != NULL ? slash + 1 : argv[0];
  bool apt = strcmp (cmd, "apt-get") == 0 || strcmp (cmd, "apt") == 0
             || strcmp (cmd, "aptitude") == 0;
  bool dpkg = strcmp (cmd, "dpkg") == 0;
  if ((apt && any_word_in (argv + 1, apt_verbs, N_ELEMENTS (apt_verbs)))
      || (dpkg && any_word_in (argv + 1, dpkg_verbs, N_ELEMENTS (dpkg_verbs))))
    return apt ? (strcmp (cmd, "apt") == 0 ? "apt" : strcmp (cmd, "aptitude") == 0 ? "aptitude"
                                                                                  : "apt-get")
               : "dpkg";
  return NULL;
}

/* The same for the commands of a shell script ("sh -c 'apt-get update && apt-get install
 * -y cmake'", as README and CI recipes write them): each simple command, its words split
 * at blanks and at ; & | ( ) ` (quotes are not undone: a hint, not a parser). */
static const char *
package_change_in_script (const char *script)
{
  const char *found = NULL;
  cleanup_free char *copy = xstrdup (script);
  char *rest = copy;
  for (char *cmd; found == NULL && (cmd = strsep (&rest, ";&|()`\n")) != NULL;)
    {
      cleanup_strv char **words = NULL;
      size_t n = 0;
      for (char *w; (w = strsep (&cmd, " \t")) != NULL;)
        if (w[0] != '\0')
          {
            words = xrealloc (words, (n + 2) * sizeof *words);
            words[n++] = xstrdup (w);
            words[n] = NULL;
          }
      /* The command word: after assignments and the words that run the next one ("sudo
       * apt-get ...", "env X=1 apt-get ..."), not an argument ("echo apt-get install"). */
      static const char *const runners[] = { "sudo", "env", "exec", "command", "nice",
                                             "nohup", "time", "then", "do", "!" };
      size_t i = 0;
      while (i < n && (strchr (words[i], '=') != NULL || words[i][0] == '-'
                       || any_word_in ((char *const[]) { words[i], NULL }, runners,
                                       N_ELEMENTS (runners))))
        i++;
      if (i < n)
        found = package_change (words + i);
    }
  return found;
}

void
rootemu_hint (const char *name, char *const *argv)
{
  const char *cmd = package_change (argv);
  const char *slash = strrchr (argv[0], '/');
  const char *prog = slash != NULL ? slash + 1 : argv[0];
  bool shell = strcmp (prog, "sh") == 0 || strcmp (prog, "bash") == 0 || strcmp (prog, "dash") == 0;
  /* sh -c SCRIPT, with -c among the options before it (-ec, -lc, -e -c). */
  for (size_t i = 1; cmd == NULL && shell && argv[i] != NULL && argv[i][0] == '-'; i++)
    if (argv[i][1] != '-' && strchr (argv[i], 'c') != NULL && argv[i + 1] != NULL)
      cmd = package_change_in_script (argv[i + 1]);
  if (cmd != NULL)
    fprintf (stderr, "%s: hint: %s changes packages only as root: add --root (%s run %s "
             "--root -- %s ...)\n", PROGRAM_NAME, cmd, PROGRAM_NAME, name, argv[0]);
}

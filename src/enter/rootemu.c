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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/rootemu-files.h"
#include "common/util.h"
#include "enter/bpf.h"
#include "enter/rootemu.h"

/* The identity calls: their 0 return value is the id. */
#define FAKE_IDS_NATIVE __NR_getuid, __NR_geteuid, __NR_getgid, __NR_getegid

/* The privileged calls a package manager makes: success (0), no effect. mknod is handled
 * apart, on its mode. */
#ifdef __NR_chown
#define NATIVE_LEGACY_CHOWN __NR_chown, __NR_lchown,
#else
#define NATIVE_LEGACY_CHOWN /* aarch64 has fchownat only */
#endif
#define FAKE_PRIV_NATIVE                                                                  \
  NATIVE_LEGACY_CHOWN __NR_fchown, __NR_fchownat, __NR_setuid, __NR_setgid,              \
    __NR_setreuid, __NR_setregid, __NR_setresuid, __NR_setresgid, __NR_setfsuid,          \
    __NR_setfsgid, __NR_setgroups, __NR_capset

#ifdef __NR_mknod
#define NATIVE_NR_MKNOD __NR_mknod
#else
#define NATIVE_NR_MKNOD (-1) /* aarch64: mknodat only */
#endif

#ifdef EDR_COMPAT_ARCH
/* i386's numbers (arch/x86/entry/syscalls/syscall_32.tbl): both the 16-bit-id originals
 * and the *32 calls that glibc uses. */
static const uint32_t compat_fake[] = {
  24, 49, 47, 50,       /* getuid geteuid getgid getegid */
  199, 201, 200, 202,   /* getuid32 geteuid32 getgid32 getegid32 */
  182, 95, 16, 298,     /* chown fchown lchown fchownat */
  212, 207, 198,        /* chown32 fchown32 lchown32 */
  23, 46, 70, 71,       /* setuid setgid setreuid setregid */
  164, 170, 138, 139,   /* setresuid setresgid setfsuid setfsgid */
  81,                   /* setgroups */
  213, 214, 203, 204,   /* setuid32 setgid32 setreuid32 setregid32 */
  208, 210, 215, 216,   /* setresuid32 setresgid32 setfsuid32 setfsgid32 */
  206,                  /* setgroups32 */
  185,                  /* capset */
};
#define COMPAT_NR_MKNOD 14
#define COMPAT_NR_MKNODAT 297
#endif

static const uint32_t native_fake[] = { FAKE_IDS_NATIVE, FAKE_PRIV_NATIVE };

#define RET_FAKE RET (SECCOMP_RET_ERRNO | 0) /* "errno 0": the call returns 0 */
#define MAX_INSNS 256                         /* far more than the two blocks need */
#define MAX_FAKED 64                          /* calls faked per architecture */

/* A program under construction. Jumps of classic BPF go forward only, by at most 255:
 * each block is laid out so every jump lands below it. */
struct prog
{
  struct sock_filter insn[MAX_INSNS];
  size_t len;
};

static size_t
emit (struct prog *p, struct sock_filter insn)
{
  if (p->len >= MAX_INSNS)
    die ("cannot build the --root seccomp filter: more than %d instructions", MAX_INSNS);
  p->insn[p->len] = insn;
  return p->len++;
}

/* BPF_STMT and BPF_JUMP are initializers: make them values. */
#define EMIT(p, insn) emit ((p), (struct sock_filter) insn)

/* Point the true branch of the conditional jump at AT to the instruction TARGET. */
static void
land (struct prog *p, size_t at, size_t target)
{
  size_t offset = target - at - 1;
  if (target <= at || offset > UINT8_MAX)
    die ("cannot build the --root seccomp filter: jump out of range");
  p->insn[at].jt = (uint8_t) offset;
}

/* One architecture's rules, entered with nothing loaded: fake the calls in FAKE, fake
 * mknod (mode in argument 1) and mknodat (argument 2) of devices, allow the rest.
 * A number of -1 means the architecture has no such call. */
static void
emit_block (struct prog *p, const uint32_t *fake, size_t n_fake, int64_t nr_mknod,
            int64_t nr_mknodat)
{
  size_t to_fake[MAX_FAKED + 2]; /* the calls, then the two device types */
  size_t n_to_fake = 0;
  if (n_fake > MAX_FAKED)
    die ("cannot build the --root seccomp filter: too many calls");

  EMIT (p, LOAD (offsetof (struct seccomp_data, nr)));
  for (size_t i = 0; i < n_fake; i++)
    to_fake[n_to_fake++] = EMIT (p, JEQ (fake[i], 0, 0));
  size_t is_mknod = nr_mknod >= 0 ? EMIT (p, JEQ ((uint32_t) nr_mknod, 0, 0)) : 0;
  size_t is_mknodat = EMIT (p, JEQ ((uint32_t) nr_mknodat, 0, 0));
  EMIT (p, RET (SECCOMP_RET_ALLOW));

  /* The mode, low 32 bits (the kernel's umode_t), then its file type. */
  if (nr_mknod >= 0)
    {
      land (p, is_mknod, EMIT (p, LOAD (ARG_LO (1))));
      EMIT (p, BPF_JUMP (BPF_JMP | BPF_JA, 1, 0, 0));
    }
  land (p, is_mknodat, EMIT (p, LOAD (ARG_LO (2))));
  EMIT (p, BPF_STMT (BPF_ALU | BPF_AND | BPF_K, S_IFMT));
  to_fake[n_to_fake++] = EMIT (p, JEQ (S_IFCHR, 0, 0));
  to_fake[n_to_fake++] = EMIT (p, JEQ (S_IFBLK, 0, 0));
  EMIT (p, RET (SECCOMP_RET_ALLOW));

  size_t ret_fake = EMIT (p, RET_FAKE);
  for (size_t i = 0; i < n_to_fake; i++)
    land (p, to_fake[i], ret_fake);
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
      cleanup_free char *tmp = xasprintf ("%s.%ld.tmp", f->path, (long) getpid ());
      int fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0)
        {
          warn ("root '%s': --root: cannot write %s: %s", name, f->path, strerror (errno));
          continue;
        }
      int err = 0;
      if (write_all (fd, f->content, strlen (f->content)) < 0 || fchmod (fd, 0644) < 0)
        err = errno;
      if (close (fd) < 0 && err == 0)
        err = errno;
      if (err == 0 && link (tmp, f->path) < 0)
        err = errno;
      unlink (tmp);
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

  static struct prog p; /* ~2 KiB: not on the stack of the entering path */
  p.len = 0;

  EMIT (&p, LOAD (offsetof (struct seccomp_data, arch)));
  size_t is_native = EMIT (&p, JEQ (EDR_AUDIT_ARCH, 0, 0));
#ifdef EDR_COMPAT_ARCH
  size_t is_compat = EMIT (&p, JEQ (EDR_COMPAT_ARCH, 0, 0));
#endif
  EMIT (&p, RET (SECCOMP_RET_ALLOW)); /* foreign: confine.c's filter kills it */

  land (&p, is_native, p.len);
  emit_block (&p, native_fake, N_ELEMENTS (native_fake), NATIVE_NR_MKNOD, __NR_mknodat);
#ifdef EDR_COMPAT_ARCH
  land (&p, is_compat, p.len);
  emit_block (&p, compat_fake, N_ELEMENTS (compat_fake), COMPAT_NR_MKNOD, COMPAT_NR_MKNODAT);
#endif

  struct sock_fprog prog = { .len = (unsigned short) p.len, .filter = p.insn };
  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
    die_with_error ("cannot enter root '%s': the --root seccomp filter", name);
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

void
rootemu_hint (const char *name, char *const *argv)
{
  const char *slash = strrchr (argv[0], '/');
  const char *cmd = slash != NULL ? slash + 1 : argv[0];
  bool apt = strcmp (cmd, "apt-get") == 0 || strcmp (cmd, "apt") == 0
             || strcmp (cmd, "aptitude") == 0;
  bool dpkg = strcmp (cmd, "dpkg") == 0;
  if ((apt && any_word_in (argv + 1, apt_verbs, N_ELEMENTS (apt_verbs)))
      || (dpkg && any_word_in (argv + 1, dpkg_verbs, N_ELEMENTS (dpkg_verbs))))
    fprintf (stderr, "%s: hint: %s changes packages only as root: add --root (%s run %s "
             "--root -- %s ...)\n", PROGRAM_NAME, cmd, PROGRAM_NAME, name, cmd);
}

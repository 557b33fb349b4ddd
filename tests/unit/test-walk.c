/* walk.c: what the walk hands out, in which order, and what it never opens. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/roots.h"
#include "common/util.h"
#include "common/walk.h"

/* One line per callback: "PATH TYPE [fd] [=FIRST] [->TARGET]", "leave PATH". */
struct record
{
  struct strbuf sb;
  const char *swap_at; /* when this path is handed out, exchange b2 and b2.link */
  int rootfd;
};

static char
type_of (mode_t m)
{
  return S_ISDIR (m) ? 'd' : S_ISREG (m) ? 'f' : S_ISLNK (m) ? 'l' : S_ISFIFO (m) ? 'p' : '?';
}

static enum walk_step
on_entry (const struct walk_entry *e, void *data)
{
  struct record *r = data;
  strbuf_appendf (&r->sb, "%s %c", e->path, type_of (e->st.st_mode));
  if (e->fd >= 0)
    {
      struct stat st;
      assert_int_equal (fstat (e->fd, &st), 0);
      assert_int_equal (st.st_ino, e->st.st_ino);
      strbuf_append (&r->sb, " fd");
    }
  if (S_ISREG (e->st.st_mode) && e->first_link == NULL)
    {
      char buf[16] = { 0 };
      assert_true (read (e->fd, buf, sizeof buf - 1) >= 0);
      strbuf_appendf (&r->sb, " '%s'", buf);
    }
  if (e->first_link != NULL)
    strbuf_appendf (&r->sb, " =%s", e->first_link);
  if (e->target != NULL)
    strbuf_appendf (&r->sb, " ->%s", e->target);
  strbuf_append_c (&r->sb, '\n');
  if (r->swap_at != NULL && strcmp (e->path, r->swap_at) == 0)
    assert_int_equal (renameat2 (r->rootfd, "b2", r->rootfd, "b2.link", RENAME_EXCHANGE), 0);
  return strcmp (e->path, "skipped") == 0 ? WALK_SKIP : WALK_DESCEND;
}

static void
on_leave (const struct walk_entry *e, void *data)
{
  struct record *r = data;
  strbuf_appendf (&r->sb, "leave %s\n", e->path);
}

static int
put (int dirfd, const char *name, const char *content)
{
  int fd = openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  assert_true (fd >= 0);
  assert_int_equal (write_all (fd, content, strlen (content)), 0);
  return close (fd);
}

/* mkdtemp (DIR), opened: its fd. The caller removes DIR. */
static int
open_tmp_dir (char *dir)
{
  assert_non_null (mkdtemp (dir));
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true (fd >= 0);
  return fd;
}

/* A tree of every kind of entry: the caller removes DIR. */
static int
make_tree (char *dir)
{
  int fd = open_tmp_dir (dir);
  assert_int_equal (mkdirat (fd, "a", 0755), 0);
  put (fd, "a/x", "x");
  assert_int_equal (linkat (fd, "a/x", fd, "a/y", 0), 0);
  put (fd, "b1", "b1");
  put (fd, "b2", "b2");
  assert_int_equal (symlinkat ("/etc/passwd", fd, "b2.link"), 0);
  assert_int_equal (mkfifoat (fd, "c", 0644), 0);
  assert_int_equal (mkdirat (fd, "d", 0755), 0);
  assert_int_equal (mkdirat (fd, "d/e", 0755), 0);
  assert_int_equal (mkdirat (fd, "skipped", 0755), 0);
  put (fd, "skipped/never", "never");
  return fd;
}

static void
order_types_links_and_skips (void **state)
{
  (void) state;
  char dir[] = "/tmp/test-walk.XXXXXX";
  int fd = make_tree (dir);
  struct record r = { .rootfd = fd };
  walk_tree (fd, "test", &(struct walk_ops) { .entry = on_entry, .leave = on_leave }, &r);
  cleanup_free char *got = strbuf_steal (&r.sb);
  assert_string_equal (got, " d fd\n"
                            "a d fd\n"
                            "a/x f fd 'x'\n"
                            "a/y f fd =a/x\n"
                            "leave a\n"
                            "b1 f fd 'b1'\n"
                            "b2 f fd 'b2'\n"
                            "b2.link l ->/etc/passwd\n"
                            "c p\n"
                            "d d fd\n"
                            "d/e d fd\n"
                            "leave d/e\n"
                            "leave d\n"
                            "skipped d fd\n"
                            "leave \n");
  close (fd);
  assert_int_equal (rm_rf_at (AT_FDCWD, dir), 0);
}

/* b2 is exchanged with a symlink to /etc/passwd after the names are listed, before b2 is
 * reached: it is handed out as the symlink it now is, never opened. */
static void
a_file_swapped_for_a_symlink_is_never_followed (void **state)
{
  (void) state;
  char dir[] = "/tmp/test-walk.XXXXXX";
  int fd = make_tree (dir);
  struct record r = { .rootfd = fd, .swap_at = "b1" };
  walk_tree (fd, "test", &(struct walk_ops) { .entry = on_entry }, &r);
  cleanup_free char *got = strbuf_steal (&r.sb);
  assert_non_null (strstr (got, "b1 f fd 'b1'\nb2 l ->/etc/passwd\nb2.link f fd 'b2'\n"));
  assert_null (strstr (got, "root:"));
  close (fd);
  assert_int_equal (rm_rf_at (AT_FDCWD, dir), 0);
}

static enum walk_step
descend (const struct walk_entry *e, void *data)
{
  (void) e;
  (void) data;
  return WALK_DESCEND;
}

/* Deeper than WALK_MAX_DEPTH: one line and exit 125 (die), no crash. */
static void
too_deep_a_tree_is_refused (void **state)
{
  (void) state;
  char dir[] = "/tmp/test-walk.XXXXXX";
  int fd = open_tmp_dir (dir);
  int cur = dup (fd);
  for (int i = 0; i < WALK_MAX_DEPTH + 2; i++)
    {
      assert_int_equal (mkdirat (cur, "d", 0755), 0);
      int next = openat (cur, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      assert_true (next >= 0);
      close (cur);
      cur = next;
    }
  close (cur);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      if (freopen ("/dev/null", "w", stderr) == NULL)
        _exit (2);
      walk_tree (fd, "test", &(struct walk_ops) { .entry = descend }, NULL);
      _exit (0);
    }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), EXIT_TOOL_FAILURE);
  close (fd);
  assert_int_equal (rm_rf_at (AT_FDCWD, dir), 0);
}

/* open_beneath's answers on a tree with a symlink on the way, one at the end, an
 * escape and a type mismatch: 0 if all are right, else the number of the first wrong one. */
static int
open_beneath_answers (int rootfd)
{
  struct
  {
    const char *path;
    int flags;
    int err; /* 0: opens; else the errno, or -1 for ELOOP or ENOTDIR */
  } cases[] = {
    { "a/b/f", O_RDONLY, 0 },
    { "a//b/f", O_RDONLY, 0 },
    { "a/b", O_RDONLY | O_DIRECTORY, 0 },
    { "a/l/f", O_RDONLY, -1 },    /* a symlink on the way */
    { "a/esc", O_RDONLY, -1 },    /* a symlink at the end, to / */
    { "../x", O_RDONLY, EXDEV },
    { "/etc/passwd", O_RDONLY, EXDEV },
    { "a/b/f", O_RDONLY | O_DIRECTORY, ENOTDIR },
    { "a/nope", O_RDONLY, ENOENT },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      errno = 0;
      int fd = open_beneath (rootfd, cases[i].path, cases[i].flags);
      if (fd >= 0)
        close (fd);
      bool right = cases[i].err == 0    ? fd >= 0
                   : cases[i].err == -1 ? fd < 0 && (errno == ELOOP || errno == ENOTDIR)
                                        : fd < 0 && errno == cases[i].err;
      if (!right)
        return (int) i + 1;
    }
  return 0;
}

/* The same answers with openat2 and without it: a child whose seccomp filter makes openat2
 * ENOSYS (an old kernel, or valgrind) takes the one-component-at-a-time fallback. */
static void
open_beneath_refuses_symlinks_and_escapes_with_and_without_openat2 (void **state)
{
  (void) state;
  char dir[] = "/tmp/test-walk.XXXXXX";
  int fd = open_tmp_dir (dir);
  assert_int_equal (mkdirat (fd, "a", 0755), 0);
  assert_int_equal (mkdirat (fd, "a/b", 0755), 0);
  assert_int_equal (put (fd, "a/b/f", "f"), 0);
  assert_int_equal (symlinkat ("b", fd, "a/l"), 0);
  assert_int_equal (symlinkat ("/", fd, "a/esc"), 0);
  assert_int_equal (open_beneath_answers (fd), 0);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      struct sock_filter insns[] = {
        BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
        BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      };
      struct sock_fprog prog = { .len = sizeof insns / sizeof *insns, .filter = insns };
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
          || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
        _exit (100);
      if (syscall (SYS_openat2, fd, "a", NULL, 0) >= 0 || errno != ENOSYS)
        _exit (101); /* the filter did not take */
      _exit (open_beneath_answers (fd));
    }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
  close (fd);
  assert_int_equal (rm_rf_at (AT_FDCWD, dir), 0);
}

/* opendir_dup: every entry, even after DIRFD was read to its end, and DIRFD left open. */
static void
opendir_dup_reads_from_the_first_entry_and_keeps_the_fd (void **state)
{
  (void) state;
  char dir[] = "/tmp/test-walk.XXXXXX";
  int fd = open_tmp_dir (dir);
  assert_int_equal (mkdirat (fd, "a", 0700), 0);
  assert_int_equal (mkdirat (fd, "b", 0700), 0);
  for (int pass = 0; pass < 2; pass++)
    {
      DIR *d = opendir_dup (fd);
      assert_non_null (d);
      int n = 0;
      for (struct dirent *de; (de = readdir (d)) != NULL;)
        n += de->d_name[0] != '.';
      closedir (d);
      /* The second pass too: the first left the shared offset at the end. */
      assert_int_equal (n, 2);
    }
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);
  assert_int_equal (rm_rf_at (AT_FDCWD, dir), 0);
  close (fd);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (order_types_links_and_skips),
    cmocka_unit_test (a_file_swapped_for_a_symlink_is_never_followed),
    cmocka_unit_test (too_deep_a_tree_is_refused),
    cmocka_unit_test (open_beneath_refuses_symlinks_and_escapes_with_and_without_openat2),
    cmocka_unit_test (opendir_dup_reads_from_the_first_entry_and_keeps_the_fd),
  };
  return cmocka_run_group_tests_name ("walk", tests, NULL, NULL);
}

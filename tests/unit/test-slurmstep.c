/* src/common/slurm-job.c, which the plugin and run --ephemeral share: the names of a job's
 * roots and the reaper's reading of them; the count of a step's tasks; and
 * step_tasks_on_node: SLURM_STEP_TASKS_PER_NODE, whose "(xN)" runs a shell hook of enroot
 * got wrong (enroot #93). */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include "common/slurm-job.h"

static const struct
{
  const char *list;
  unsigned index, tasks;
} good[] = {
  { "4", 0, 4 },        { "3,1", 0, 3 },       { "3,1", 1, 1 },
  { "2(x2)", 1, 2 },    { "2(x3),1", 2, 2 },   { "2(x3),1", 3, 1 },
  { "1,4(x2),2", 2, 4 }, { "1,4(x2),2", 3, 2 }, { "16(x100)", 99, 16 },
};

static const struct
{
  const char *list;
  unsigned index;
} bad[] = {
  { "", 0 },     { "2", 1 },      { "2(x2)", 2 },  { "x", 0 },    { "2(x)", 0 },
  { "2(x0)", 0 }, { "2(x2", 0 },  { "2,,1", 1 },   { "0", 0 },    { "2;1", 0 },
  { "-1", 0 },   { "2(x2) ", 0 }, { "99999999999", 0 },
};

static void
finds_the_count_of_each_node (void **state)
{
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    {
      unsigned n = 0;
      if (step_tasks_on_node (good[i].list, good[i].index, &n) < 0)
        fail_msg ("refused '%s' node %u", good[i].list, good[i].index);
      if (n != good[i].tasks)
        fail_msg ("'%s' node %u: %u tasks, expected %u", good[i].list, good[i].index, n,
                  good[i].tasks);
    }
}

static void
refuses_malformed_lists_and_nodes_past_the_end (void **state)
{
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      unsigned n = 42;
      if (step_tasks_on_node (bad[i].list, bad[i].index, &n) == 0)
        fail_msg ("accepted '%s' node %u as %u", bad[i].list, bad[i].index, n);
    }
}

static const struct
{
  struct jobroot root;
  const char *name;
} names[] = {
  { { SLURM_ROOT_PLUGIN, 42, "0", NULL, "1" }, "slurm-42.0.1" },
  { { SLURM_ROOT_PLUGIN, 42, "batch", NULL, "0" }, "slurm-42.batch.0" },
  { { SLURM_ROOT_PLUGIN, 4294967295u, NULL, "keep", "node-7" }, "slurm-4294967295-keep.node-7" },
  { { SLURM_ROOT_EPHEMERAL, 42, "3", NULL, "n1" }, "ephemeral-slurm-42.3.n1" },
  { { SLURM_ROOT_EPHEMERAL, 42, NULL, "build", "n.x/y" }, "ephemeral-slurm-42-build.n_x_y" },
  { { SLURM_ROOT_EPHEMERAL, 7, "0", NULL, "a123456789b123456789c" },
    "ephemeral-slurm-7.0.a123456789b123456789" },
};

static void
names_a_jobs_roots_and_reads_them_back (void **state)
{
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    {
      char name[SLURM_ROOT_NAME_MAX + 1], job[SLURM_JOB_ID_DIGITS_MAX + 1], id[16];
      bool named;
      const char *where;
      const struct jobroot *r = &names[i].root;
      if (jobroot_name (r, name) < 0)
        fail_msg ("no name for %s", names[i].name);
      assert_string_equal (name, names[i].name);
      if (!jobroot_parse (name, r->owner, job, &named, &where))
        fail_msg ("%s not read back", name);
      snprintf (id, sizeof id, "%u", r->job);
      assert_string_equal (job, id);
      assert_true (named == (r->name != NULL));
      assert_string_equal (where, strrchr (names[i].name, '.') + 1);
      /* The other owner's reaper never takes it for its own. */
      enum jobroot_owner other = r->owner == SLURM_ROOT_PLUGIN ? SLURM_ROOT_EPHEMERAL
                                                               : SLURM_ROOT_PLUGIN;
      if (jobroot_parse (name, other, job, &named, &where))
        fail_msg ("%s read as the other owner's", name);
    }
}

static void
refuses_names_too_long_and_names_not_a_jobs (void **state)
{
  char name[SLURM_ROOT_NAME_MAX + 1], job[SLURM_JOB_ID_DIGITS_MAX + 1];
  bool named;
  const char *where;
  /* The longest --devroot-name (24) and --name (12) with the longest job id and WHERE fit. */
  struct jobroot plugin = { SLURM_ROOT_PLUGIN, 4294967295u, NULL, "abcdefghijklmnopqrstuvwx",
                            "a123456789b123456789" };
  struct jobroot ephemeral = { SLURM_ROOT_EPHEMERAL, 4294967295u, NULL, "abcdefghijkl",
                               "a123456789b123456789" };
  assert_int_equal (jobroot_name (&plugin, name), 0);
  assert_int_equal (jobroot_name (&ephemeral, name), 0);
  plugin.name = "abcdefghijklmnopqrstuvwxyz0";
  assert_int_equal (jobroot_name (&plugin, name), -1);
  const char *not_roots[] = {
    "slurm-", "slurm-42", "slurm-.0.1", "slurm-42.", "slurm-42-keep.", "slurm-x42.0.1",
    "slurm-12345678901.0.0", "ephemeral-0123456789abcdef", "dev", "slurm_42.0.1",
  };
  for (size_t i = 0; i < sizeof not_roots / sizeof not_roots[0]; i++)
    if (jobroot_parse (not_roots[i], SLURM_ROOT_PLUGIN, job, &named, &where)
        || jobroot_parse (not_roots[i], SLURM_ROOT_EPHEMERAL, job, &named, &where))
      fail_msg ("took '%s' for a job's root", not_roots[i]);
}

static void
counts_a_steps_tasks (void **state)
{
  struct step_count c = { 0 };
  /* The first creates; one that comes while it does waits on the lock, then shares. */
  assert_int_equal (step_count_join (&c), STEP_JOIN_CREATE);
  assert_false (step_count_ready (&c));
  step_count_created (&c, true);
  assert_true (step_count_ready (&c));
  assert_int_equal (step_count_join (&c), STEP_JOIN_SHARE);
  assert_false (step_count_leave (&c, 3)); /* a task that ends early removes nothing */
  assert_int_equal (step_count_join (&c), STEP_JOIN_SHARE);
  assert_false (step_count_leave (&c, 3));
  assert_true (step_count_leave (&c, 3));

  /* A creator killed before it said how it went: the next task creates instead. */
  c = (struct step_count) { 0 };
  assert_int_equal (step_count_join (&c), STEP_JOIN_CREATE);
  assert_int_equal (step_count_join (&c), STEP_JOIN_CREATE);
  step_count_created (&c, false);
  assert_false (step_count_ready (&c));
  /* A failure is every later task's; each leaves at once, and the last cleans up. */
  assert_int_equal (step_count_join (&c), STEP_JOIN_FAILED);
  assert_false (step_count_leave (&c, 2));
  assert_true (step_count_leave (&c, 2));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (finds_the_count_of_each_node),
    cmocka_unit_test (refuses_malformed_lists_and_nodes_past_the_end),
    cmocka_unit_test (names_a_jobs_roots_and_reads_them_back),
    cmocka_unit_test (refuses_names_too_long_and_names_not_a_jobs),
    cmocka_unit_test (counts_a_steps_tasks),
  };
  return cmocka_run_group_tests_name ("slurmstep", tests, NULL, NULL);
}

/* step_tasks_on_node: SLURM_STEP_TASKS_PER_NODE, whose "(xN)" runs a shell hook of enroot
 * got wrong (enroot #93). */
#include "unit.h"

#include "enter/slurmstep.h"

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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (finds_the_count_of_each_node),
    cmocka_unit_test (refuses_malformed_lists_and_nodes_past_the_end),
  };
  return cmocka_run_group_tests_name ("slurmstep", tests, NULL, NULL);
}

/* The PMI-2 client of tests/slurm/mpi.bats, on Slurm's own libpmi2 (srun --mpi=pmi2):
 * every task puts a key of its own into the job's key-value space, fences, and reads the
 * next task's; it prints its rank, the size and what it read. */
#include <stdio.h>
#include <slurm/pmi2.h>

int
main (void)
{
  int spawned, size, rank, appnum, len;
  char jobid[64], key[32], value[64];
  if (PMI2_Init (&spawned, &size, &rank, &appnum) != PMI2_SUCCESS)
    {
      fprintf (stderr, "PMI2_Init failed\n");
      return 1;
    }
  if (PMI2_Job_GetId (jobid, sizeof jobid) != PMI2_SUCCESS)
    return 1;
  snprintf (key, sizeof key, "key%d", rank);
  snprintf (value, sizeof value, "value%d", rank * 10);
  if (PMI2_KVS_Put (key, value) != PMI2_SUCCESS || PMI2_KVS_Fence () != PMI2_SUCCESS)
    return 1;
  snprintf (key, sizeof key, "key%d", (rank + 1) % size);
  if (PMI2_KVS_Get (jobid, PMI2_ID_NULL, key, value, sizeof value, &len) != PMI2_SUCCESS)
    return 1;
  printf ("rank %d of %d: %s=%s\n", rank, size, key, value);
  PMI2_Finalize ();
  return 0;
}

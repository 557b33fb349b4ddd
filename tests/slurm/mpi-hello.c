/* The MPI program of tests/slurm/mpi.bats: every rank prints its rank, the size and an
 * Allreduce of rank + 1 over all ranks (size * (size + 1) / 2 when every rank took part).
 * With "big", rank 0 also sends rank 1 a 16 MiB message, which rank 1 checks word by word:
 * between two ranks of a node, Open MPI's shared-memory transport moves it by single copy
 * (CMA) where it may. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG_WORDS (4 * 1024 * 1024)

int
main (int argc, char **argv)
{
  int rank, size, one, sum = 0;
  MPI_Init (&argc, &argv);
  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
  MPI_Comm_size (MPI_COMM_WORLD, &size);
  one = rank + 1;
  MPI_Allreduce (&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf ("rank %d of %d: sum %d\n", rank, size, sum);
  if (argc > 1 && strcmp (argv[1], "big") == 0 && size > 1 && rank < 2)
    {
      int *words = malloc (BIG_WORDS * sizeof *words);
      if (words == NULL)
        MPI_Abort (MPI_COMM_WORLD, 2);
      for (int i = 0; i < BIG_WORDS; i++)
        words[i] = rank == 0 ? i ^ 0x5a5a5a5a : 0;
      if (rank == 0)
        MPI_Send (words, BIG_WORDS, MPI_INT, 1, 0, MPI_COMM_WORLD);
      else
        {
          MPI_Recv (words, BIG_WORDS, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          int bad = 0;
          for (int i = 0; i < BIG_WORDS; i++)
            bad += words[i] != (i ^ 0x5a5a5a5a);
          printf ("rank 1: %d words received, %d wrong\n", BIG_WORDS, bad);
        }
      free (words);
    }
  MPI_Finalize ();
  return 0;
}

/* What an MPI launcher gives each of its tasks, carried into the root (mpi.c): the
 * directories of the PMIx server that started the task (srun --mpi=pmix's slurmstepd,
 * mpirun, prterun), and PMI-2's socket (srun --mpi=pmi2, MPICH's hydra). The variables
 * naming them (PMIX_*, PMI_*) reach the command already (env.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "enter/bind.h"

/* PMI_FD, where it names an open socket: that socket's fd, to be kept open across every
 * close of the job's fds (it is the task's connection to its launcher's PMI server; a
 * socket is no way out of the root, as a directory fd would be). One below MPI_PMI_FD_MIN
 * (where enter-devroot puts fds of its own) is moved there first and PMI_FD set to match.
 * -1 when PMI_FD is unset or names no socket. Called again, it returns the same fd. */
#define MPI_PMI_FD_MIN 10
int mpi_pmi_fd (void);

/* userns mode: where this process is a PMIx server's client (PMIX_NAMESPACE and
 * PMIX_RANK set), append to *BINDS (*N entries, bind_parse_all's array) an optional bind
 * (bind.h), read-write, nosuid, nodev and noexec, at its own path inside the root, of
 * each directory the server
 * keeps for its clients: PMIX_SERVER_TMPDIR (its shared-memory store, which the clients
 * map: without it every rank prints PMIx's "gds_ds12_lock_pthread.c" error and falls back
 * to asking the server), each PMIX_DSTORE_*_BASE_PATH outside it, and Slurm's
 * spmix_appdir_[UID_]JOB.STEP in PMIX_SYSTEM_TMPDIR, as enroot's hook binds them for
 * pyxis. Only a directory of the caller's own that nobody else may write is bound (the
 * servers make them so): never /tmp, nor another user's. */
void mpi_add_binds (struct bind **binds, size_t *n);

/* The command's environment ENVP (strv, env_build's), for a task of an MPI job (PMIX_RANK
 * or PMI_RANK set) that runs in a Landlock domain (LANDLOCK): each task's command has a
 * domain of its own, and a Landlock domain may not ptrace a process outside it, nor so
 * read its memory with process_vm_readv, which is Open MPI's single-copy transfer (CMA)
 * between the ranks of a node. Every large message between them then fails once, printing
 * "Read -1, expected N, errno = 1", before Open MPI copies it through the shared segment
 * instead: OMPI_MCA_btl_vader_single_copy_mechanism=none, unless the caller set it, has
 * it do so from the start. ENVP, or a new vector in its place (the old one freed). */
char **mpi_env_defaults (char **envp, bool landlock);

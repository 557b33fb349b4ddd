/* Step 8 of entering (enter.c): start the job, the child process that enters the root and
 * becomes the command (command.c), while this process stays outside as its supervisor
 * (supervise.c). */
#pragma once

#include <sys/types.h>

#include "common/options.h"
#include "enter/share.h"
#include "enter/view.h"

/* chroot mode: the child makes ROOTFD, its working directory, its root and becomes the
 * command. The supervisor closes ROOTFD. */
pid_t start_chroot_job (const char *name, const struct enter_opts *opts, int rootfd);

/* userns mode: the child is PID 1 of new user, mount and PID namespaces; it builds the
 * root's view, chroots, and forks the command (step 8). SHARE (share.h) says what it
 * shares. An overlay root's job is made in its holder's user and mount namespaces
 * (SHARE->base: this process joins them, so that the child's new mount namespace is a copy
 * of the one with the root's overlay). A warm run (SHARE->step, with an idle time) joins
 * its keeper's user and mount namespaces the same way, where the view is built already:
 * its child is PID 1 of a PID namespace of its own there, with a /proc of its own, so that
 * nothing the command starts outlives it (setsid or double fork included), while the
 * keeper outlives the job. Joining costs this process nothing it uses: it has no privilege
 * on the host to lose, and reads nothing of the root. In a Slurm step whose tasks share
 * namespaces (SHARE->step, not warm) the child joins the keeper's user, mount and PID
 * namespaces, chroots into the root again (joining made the mount namespace's root ours),
 * and forks the command there: the tasks see each other. *STATUS_READ receives the end of
 * the pipe the command's wait status comes through. */
pid_t start_userns_job (struct userns_view *view, const struct job_share *share,
                        int *status_read);

/* The host's /etc/resolv.conf and /etc/hosts inside a devroot (see hostfiles.c). */
#pragma once

/* chroot mode, before the chroot: copy the host's files into ROOT (devroot NAME) where
 * its own are missing, empty or the copy made last time; record the copies' stamps in the
 * metadata. */
void hostfiles_refresh_copies (const char *name, const char *root);

/* userns mode, in the private mount namespace with the root as the working directory:
 * bind the host's files read-only over the root's. */
void hostfiles_bind (const char *name);

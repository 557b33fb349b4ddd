/* Where devroots, their metadata, staging areas and locks live. */
#pragma once

/* The XDG data directory: XDG_DATA_HOME when it is an absolute path (the XDG spec says a
 * relative one is ignored), else HOME/.local/share. NULL when neither can be used. Pure: the
 * unit tests call it with chosen values. */
char *paths_data_home (const char *xdg_data_home, const char *home);

/* The store's layout under DATA_HOME/enter-devroot. All strings are owned by the struct. */
struct store_paths
{
  char *base;    /* .../enter-devroot */
  char *roots;   /* .../enter-devroot/roots */
  char *meta;    /* .../enter-devroot/meta */
  char *staging; /* .../enter-devroot/staging: same filesystem, so rename is atomic */
  char *locks;   /* .../enter-devroot/locks */
};

void store_paths_init (struct store_paths *p, const char *data_home);
void store_paths_clear (struct store_paths *p);
/* From the environment (XDG_DATA_HOME, HOME, else the passwd entry); die()s when impossible. */
void store_paths_from_env (struct store_paths *p);

char *paths_root (const struct store_paths *p, const char *name);
char *paths_meta (const struct store_paths *p, const char *name);
char *paths_lock (const struct store_paths *p, const char *name);

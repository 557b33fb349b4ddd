/* Where devroots, their metadata, staging areas and locks live. */
#pragma once

/* An XDG base directory: VALUE (of XDG_DATA_HOME, XDG_CACHE_HOME...) when it is an absolute
 * path (the XDG spec says a relative one is ignored), else HOME/HOME_SUBDIR. NULL when neither
 * can be used. Pure: the unit tests call it with chosen values. */
char *paths_xdg_home (const char *value, const char *home, const char *home_subdir);

/* $HOME when it is an absolute path, else the passwd entry's home; NULL when neither. */
const char *paths_home (void);

/* paths_xdg_home() for the environment variable VAR, with HOME from the environment, else the
 * passwd entry. die()s when neither gives an absolute path. */
char *paths_xdg_dir (const char *var, const char *home_subdir);

/* The user's config file, XDG_CONFIG_HOME/enter-devroot/config (userconfig.h has its
 * format), and the value of the last "KEY = VALUE" line in it: NULL when there is no file
 * or no such line. *FILE, unless NULL, receives the file's path (for a message). */
char *paths_config_value (const char *key, char **file);

/* The store's layout under DATA_HOME/enter-devroot. All strings are owned by the struct. */
struct store_paths
{
  char *base;    /* .../enter-devroot */
  char *roots;   /* .../enter-devroot/roots */
  char *meta;    /* .../enter-devroot/meta */
  char *staging; /* .../enter-devroot/staging: same filesystem, so rename is atomic */
  char *locks;   /* .../enter-devroot/locks */
  char *overlays; /* .../enter-devroot/overlays: overlay roots' upper and work (overlay.h) */
};

void store_paths_init (struct store_paths *p, const char *data_home);
void store_paths_clear (struct store_paths *p);
/* From the environment (XDG_DATA_HOME, HOME, else the passwd entry); die()s when impossible. */
void store_paths_from_env (struct store_paths *p);

char *paths_root (const struct store_paths *p, const char *name);
char *paths_meta (const struct store_paths *p, const char *name);
/* overlays/NAME: an overlay root's upper/ and work/ (overlay.h). */
char *paths_overlay (const struct store_paths *p, const char *name);
char *paths_lock (const struct store_paths *p, const char *name);
/* Held by the `run --ephemeral` that owns the throwaway root NAME, from before its creation
 * until after its removal (see roots.h). */
char *paths_run_lock (const struct store_paths *p, const char *name);

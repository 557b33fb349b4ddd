/* Where a root is saved to when a job ends (run --ephemeral --save, the plugin's
 * --devroot-save): one check of the target and one choice of compression for both. The C
 * library only, and nothing here dies: the plugin, loaded into srun and slurmstepd, links
 * it too. */
#pragma once

/* Why FILE must not be written (static text: "a directory", "an existing file that is
 * not an archive", "its directory is missing or not writable"...), or NULL when it may:
 * never overwrite what is not an archive (pyxis #151: a save to ./ emptied a home), and
 * say before a long job, not after it, that the directory cannot take the file. */
const char *save_target_refusal (const char *file);
/* Its answer for a FILE that is not there yet, in a directory that cannot take it: the one
 * refusal that leaves nothing "as it is". */
#define SAVE_TARGET_NO_DIR "its directory is missing or not writable"

/* The compression FILE's name says: .tar.gz or .tgz gzip, .tar.xz or .txz xz, .tar.zst or
 * .tzst zstd, .tar none; NULL for any other name. */
const char *save_suffix_compression (const char *file);
/* export's compression for FILE when --compress is not given: its suffix's, else zstd. */
const char *save_compression (const char *file);

/* pyxis's image names, for pyxis_compat=1 (image-name.c). No Slurm here: the unit tests
 * link it alone. */
#pragma once

/* What `enter-devroot create --from` takes for the --container-image VALUE a pyxis script
 * gives: a malloc'd string in *SOURCE, and in *USER (malloc'd, or NULL) the USER@ it named.
 * -1 with *WHY (static text) when VALUE is not a name pyxis accepts or one we cannot
 * follow; -1 with *WHY NULL when out of memory. */
int pyxis_image_source (const char *value, char **source, char **user, const char **why);

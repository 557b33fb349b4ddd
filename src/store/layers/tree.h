/* create --from DIR: a directory tree copied under the rules of an archive (tree.c). */
#pragma once

#include "store/extract/extract.h"

/* Copy the tree at DIR into the extractor's root, entry by entry, as if it were an archive
 * of it: the same refusals, skips and limits (extract.c); file data cloned by reference
 * where the filesystem can. die()s naming the entry at fault. */
void tree_copy (struct extractor *x, const char *dir);

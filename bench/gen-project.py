#!/usr/bin/env python3
"""Generate a small C project: N translation units with loops, structs and calls."""
import os
import sys

out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "common.h"), "w") as h:
    h.write("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n")
    h.write("struct item { int key; double w; char name[32]; struct item *next; };\n")
    for i in range(n):
        h.write(f"long unit{i}(struct item *list, int n);\n")
for i in range(n):
    with open(os.path.join(out, f"unit{i}.c"), "w") as c:
        c.write('#include "common.h"\n')
        for j in range(12):
            c.write(f"""
static int cmp{j}(const void *a, const void *b)
{{
	const struct item *x = a, *y = b;
	return (x->key * {j + 3} % 97) - (y->key * {j + 3} % 97);
}}

static long work{j}(struct item *list, int n)
{{
	long acc = {j};
	struct item *v = calloc(n, sizeof(*v));
	if (!v)
		return -1;
	for (int k = 0; k < n && list; k++, list = list->next) {{
		v[k] = *list;
		snprintf(v[k].name, sizeof(v[k].name), "u{i}-{j}-%d", k);
		acc += (long)(v[k].w * {j + 1}) ^ (long)strlen(v[k].name);
	}}
	qsort(v, n, sizeof(*v), cmp{j});
	for (int k = 1; k < n; k++)
		acc += v[k].key > v[k - 1].key ? k : -k;
	free(v);
	return acc;
}}
""")
        c.write(f"\nlong unit{i}(struct item *list, int n)\n{{\n\treturn 0")
        for j in range(12):
            c.write(f" + work{j}(list, n)")
        c.write(";\n}\n")

/* A CDI spec written in YAML, read with libyaml into the tree jansson reads JSON into, so
 * that one checker (spec.c) reads both, as the CDI's own Go code does (sigs.k8s.io/yaml
 * turns YAML into JSON first). */
#pragma once

#include <jansson.h>
#include <stddef.h>

/* Nesting deeper than this is refused (a spec is 6 levels deep): nothing recurses on the
 * input's depth, but the checker walks the tree it makes. */
#define YAML_DEPTH_MAX 64

/* TEXT (LEN bytes, one YAML document) as a jansson tree: mappings are objects, sequences
 * arrays; a quoted scalar is a string, a plain one what YAML 1.2's core schema makes of it
 * (null, true/false, an integer, a number) or else a string. Refused, with a line number:
 * aliases and anchors (an alias can make a small text a huge tree), tags other than the
 * core schema's, keys that are not scalars or repeat, NUL bytes, more than one document,
 * nesting deeper than YAML_DEPTH_MAX. 0 with *OUT, or -1 with a malloc'd one-line *ERROR. */
int yaml_to_json (const char *text, size_t len, json_t **out, char **error);

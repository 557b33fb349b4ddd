#!/bin/sh
# The SPANK plugin exports only what Slurm looks up (src/spank/spank_enter_devroot.lds):
# list its defined dynamic symbols and fail on any other. Prints TAP.
#
# usage: tests/spank/exports.sh PLUGIN.so
set -u
so=${1:?usage: tests/spank/exports.sh PLUGIN.so}
echo 1..2
if ! symbols=$(nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }'); then
	echo "not ok 1 nm -D --defined-only $so"
	exit 1
fi
echo "ok 1 nm -D --defined-only $so"
others=$(printf '%s\n' "$symbols" |
	grep -Ev '^(plugin_name|plugin_type|plugin_version|spank_plugin_version|slurm_spank_[a-z_]+)$' |
	tr '\n' ' ')
if [ -n "$others" ]; then
	echo "not ok 2 only Slurm's entry points are exported"
	echo "# also exported: $others"
	exit 1
fi
printf '%s\n' "$symbols" | grep -qx slurm_spank_init || {
	echo "not ok 2 only Slurm's entry points are exported"
	echo "# slurm_spank_init is missing: $symbols"
	exit 1
}
echo "ok 2 only Slurm's entry points are exported ($(printf '%s\n' "$symbols" | wc -l) symbols)"

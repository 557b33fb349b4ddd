#!/bin/bash
# Regenerate kernel/patches from a development tree whose branch holds the
# series on top of `pristine` (see kernel/README.md), fill the cover letter
# from kernel/cover-letter.txt (first line: subject; the rest: text) and
# rewrite kernel/patches/series.
#
# Usage: kernel/format-series.sh DEV_TREE
set -euo pipefail

KDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 DEV_TREE" >&2; exit 1; }
DEV=$1
COVER=$KDIR/cover-letter.txt
[ -d "$DEV" ] || { echo "enter-devroot: $DEV: no such directory" >&2; exit 1; }
git -C "$DEV" rev-parse -q --verify pristine >/dev/null ||
	{ echo "enter-devroot: $DEV: no pristine branch" >&2; exit 1; }

rm -f "$KDIR"/patches/*.patch
git -C "$DEV" format-patch -q --cover-letter -v1 --base=pristine \
	-o "$KDIR/patches" pristine..HEAD

letter=$(ls "$KDIR"/patches/v1-0000-cover-letter.patch)
body=$(mktemp)
trap 'rm -f "$body"' EXIT
tail -n +3 "$COVER" > "$body"
subject=$(head -n 1 "$COVER")
awk -v subject="$subject" -v body="$body" '
	/\*\*\* SUBJECT HERE \*\*\*/ {
		i = index($0, "*** SUBJECT HERE ***")
		print substr($0, 1, i - 1) subject
		next
	}
	$0 == "*** BLURB HERE ***" {
		while ((getline line < body) > 0)
			print line
		next
	}
	{ print }
' "$letter" > "$letter.new"
mv "$letter.new" "$letter"

(cd "$KDIR/patches" && ls v1-000[1-9]*.patch) > "$KDIR/patches/series"
echo "kernel/patches: $(wc -l < "$KDIR/patches/series") patches and a cover letter"

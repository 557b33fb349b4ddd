#!/bin/bash
# Regenerate kernel/patches from a development tree whose branch holds the
# series on top of `pristine` (see kernel/README.md), fill the cover letter
# from kernel/cover-letter.txt (first line: subject; the rest: text) and
# rewrite kernel/patches/series.  The series is sent as v$VERSION.
#
# Usage: kernel/format-series.sh DEV_TREE
set -euo pipefail

KDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 DEV_TREE" >&2; exit 1; }
DEV=$1
COVER=$KDIR/cover-letter.txt
VERSION=8
# The lists every patch goes to; people are Cc'd in the patches themselves
# (send with `git send-email --cc-cover`, so that they get the cover letter
# too).
LISTS=(--to=linux-fsdevel@vger.kernel.org --cc=linux-api@vger.kernel.org
	--cc=linux-security-module@vger.kernel.org --cc=selinux@vger.kernel.org
	--cc=linux-kernel@vger.kernel.org)
[ -d "$DEV" ] || { echo "enter-devroot: $DEV: no such directory" >&2; exit 1; }
git -C "$DEV" rev-parse -q --verify pristine >/dev/null ||
	{ echo "enter-devroot: $DEV: no pristine branch" >&2; exit 1; }

rm -f "$KDIR"/patches/*.patch
git -C "$DEV" format-patch -q --cover-letter -v"$VERSION" --base=pristine "${LISTS[@]}" \
	-o "$KDIR/patches" pristine..HEAD

letter=$KDIR/patches/v$VERSION-0000-cover-letter.patch
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

# The SELinux patch asks its maintainers to choose: it is sent as an RFC.
for p in "$KDIR"/patches/v"$VERSION"-000[1-9]-selinux-*.patch; do
	[ -f "$p" ] || continue
	sed -i "s/^Subject: \[PATCH v$VERSION /Subject: [RFC PATCH v$VERSION /" "$p"
done

(cd "$KDIR/patches" && ls "v$VERSION"-000[1-9]*.patch) > "$KDIR/patches/series"
echo "kernel/patches: $(wc -l < "$KDIR/patches/series") patches and a cover letter"

#!/usr/bin/env python3
"""The source tree shows the trust boundary between the programs: src/enter/ is
enter-devroot (libc only), src/store/ is enter-devroot-store (libarchive, libcurl,
libcrypto: every parser of untrusted input), src/cdi/ is enter-devroot-cdi (libjansson and
libyaml: the CDI specs of --device), src/common/ is what all link. Check that it stays true
at the source level, as tests/host/split.bats checks it at the binary level (DT_NEEDED).
Prints TAP.

  - every project include names its folder ("common/util.h"), so a reader sees the
    boundary on each include line;
  - nothing under src/enter/ or src/common/ includes a header of src/store/ or src/cdi/;
  - src/cdi/ includes only its own and src/common/ headers;
  - nothing under src/common/ or src/store/ includes a header of src/enter/;
  - src/ci/ (the CI engines' drivers, linked into enter-devroot-store) includes only
    its own and src/common/ headers: it calls the enter-devroot commands, nothing else
    (the tree walk the Actions hooks' chroot mode reads a root with, ci/volumes.c, is
    common/walk.h); src/store/ includes only its own and src/common/ headers, but for
    its main, which dispatches the drivers (ci/ci.h): the one arrow between the two never
    comes back;
  - enter-devroot's sources and libraries in Makefile.am lie under src/enter/ and
    src/common/ only.

usage: tests/doc/layout-check.py [SRCDIR]"""
import glob
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Which folders a file in each folder may include from.
ALLOWED = {"enter": {"enter", "common"}, "common": {"common"}, "store": {"store", "common"},
           "ci": {"ci", "common"}, "cdi": {"cdi", "common"}}
# Single headers one file may include beyond those: the store helper's main dispatches the
# CI drivers (see the docstring).
ALLOWED_HEADERS = {"src/store/main.c": {"ci/ci.h"}}

results = []


def check(ok, name, why=""):
    results.append((ok, name, why))


for folder, allowed in sorted(ALLOWED.items()):
    # A program's folder and the folders inside it (src/store/oci/...): one boundary.
    files = sorted(glob.glob(os.path.join(src, "src", folder, "**", "*.[ch]"), recursive=True))
    check(bool(files), f"src/{folder}/ holds sources", "no .c or .h file found")
    for path in files:
        rel = os.path.relpath(path, src)
        with open(path, encoding="utf-8") as f:
            includes = INCLUDE.findall(f.read())
        bare = [h for h in includes if "/" not in h]
        check(not bare, f"{rel} names the folder of each include", "bare: " + ", ".join(bare))
        crossing = [h for h in includes if "/" in h and h.split("/", 1)[0] not in allowed
                    and h not in ALLOWED_HEADERS.get(rel, set())]
        check(not crossing, f"{rel} includes only from {', '.join(sorted(allowed))}",
              "crosses the boundary: " + ", ".join(crossing))

# enter-devroot links its main and the libraries named in EDR_ENTER_LDADD; their sources
# must all lie under src/enter/ or src/common/.
with open(os.path.join(src, "Makefile.am"), encoding="utf-8") as f:
    am = re.sub(r"\\\n", " ", f.read())
vars_ = dict(re.findall(r"^([A-Za-z_]+)\s*\+?=\s*(.*)$", am, re.M))
libs = vars_.get("EDR_ENTER_LDADD", "").split()
check(bool(libs), "Makefile.am names enter-devroot's libraries (EDR_ENTER_LDADD)")
sources = vars_.get("src_enter_devroot_SOURCES", "").split()
for lib in libs:
    sources += vars_.get(re.sub(r"[^A-Za-z0-9]", "_", lib) + "_SOURCES", "").split()
outside = [s for s in sources if not re.match(r"src/(enter|common)/", s)]
check(bool(sources) and not outside, "enter-devroot is built from src/enter/ and src/common/ only",
      "outside: " + ", ".join(outside) if outside else "no sources found")

print(f"1..{len(results)}")
for i, (ok, name, why) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {name}")
    if not ok and why:
        print(f"# {why}")
sys.exit(0 if all(ok for ok, _, _ in results) else 1)

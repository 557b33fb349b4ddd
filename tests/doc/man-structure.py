#!/usr/bin/env python3
"""The man page's option lists render as lists: each option a tagged paragraph of the
subcommand it belongs to. groff joins a `.B --opt` without its `.TP` into the paragraph
before, and a subcommand's `.RS` block placed after another subcommand shows its options
under that one; both happened (`--root` inside the host-DNS paragraph, `--ephemeral`
under `images`). Renders man/enter-devroot.1.in with man(1) and checks that every
option of enter and run is a tag under run's entry, and that `images` has no options of
its own beyond --json. Prints TAP.

usage: tests/doc/man-structure.py [SRCDIR]"""
import os
import re
import shutil
import subprocess
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
page = os.path.join(src, "man", "enter-devroot.1.in")
if shutil.which("man") is None:
    print("1..0 # SKIP man(1) is not installed")
    sys.exit(0)
text = subprocess.run(["man", "-l", page], capture_output=True, text=True, check=True,
                      env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="",
                               LC_ALL="C.UTF-8")).stdout
text = re.sub(r".\x08", "", text)
lines = text.splitlines()

# A subcommand's entry: "       NAME ..." at the first indentation, up to the next one.
entries = {}
current = None
for line in lines:
    m = re.match(r"^ {7}([a-z][a-z-]*)\b", line)
    if m:
        current = m.group(1)
        entries.setdefault(current, [])
    elif re.match(r"^\S", line):
        current = None
    elif current is not None:
        entries[current].append(line)

def tags(entry):
    return [m.group(1) for l in entries.get(entry, []) for m in [re.match(r"^ {14}(--[a-z-]+)", l)] if m]

checks = []
run_tags = tags("run")
for opt in ("--entrypoint", "--ephemeral"):
    checks.append((opt in run_tags, f"{opt} is a tagged option under run"))
checks.append((set(tags("images")) <= {"--json"}, "images lists no option but --json"))
option_tags = [m.group(1) for l in lines for m in [re.match(r"^ {7}(--[a-z-]+)", l)] if m]
for opt in ("--workdir", "--env", "--root", "--bind", "--timeout"):
    checks.append((opt in option_tags, f"{opt} is a tagged paragraph of the common options"))

print(f"1..{len(checks)}")
for i, (ok, what) in enumerate(checks, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {what}")
sys.exit(0 if all(ok for ok, _ in checks) else 1)

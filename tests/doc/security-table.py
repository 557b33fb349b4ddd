#!/usr/bin/env python3
"""SECURITY.md's table of attacks names the tests that show each defence: check that every
test it quotes exists, and that every test of the attack suites (confine.bats, escape.bats)
is quoted. Prints TAP. A quoted name may stand for several tests with "..." (any text).

usage: tests/doc/security-table.py [SRCDIR]"""
import glob
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
# Suites whose every test is an attack or a defence, so each must be in the table.
ATTACK_SUITES = ("tests/host/confine.bats", "tests/guest/escape.bats")


def unescape(s):
    return re.sub(r"\\(.)", r"\1", s)


def pattern(quoted):
    """A quoted name as a regex: "..." and "(...)" stand for any text."""
    parts = re.split(r"\(\.\.\.\)|\.\.\.", quoted)
    # The suite's prefix ("hostile: ", "escape: ") may be left out.
    return re.compile(r"^([a-z-]+: )?" + ".*".join(re.escape(p) for p in parts) + "$")


tests = {}  # name -> file
for path in sorted(glob.glob(os.path.join(src, "tests", "**", "*.bats"), recursive=True)):
    rel = os.path.relpath(path, src)
    with open(path, encoding="utf-8") as f:
        for m in re.finditer(r'^@test ("(?:[^"\\]|\\.)*")', f.read(), re.M):
            tests[unescape(m.group(1)[1:-1])] = rel

# The cells under a column headed "Test..." of every table in SECURITY.md.
cited = []
column = None
with open(os.path.join(src, "SECURITY.md"), encoding="utf-8") as f:
    for line in f:
        if not line.startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if column is None:  # a table's header row
            column = next((i for i, c in enumerate(cells) if c.startswith("Test")), -1)
        elif column >= 0 and column < len(cells) and not set(cells[column]) <= set("-: "):
            cited += [unescape(q) for q in QUOTED.findall(cells[column])]

results = []
used = set()
for name in cited:
    rx = pattern(name)
    hits = [t for t in tests if rx.match(t)]
    used.update(hits)
    results.append((bool(hits), f'SECURITY.md cites "{name}": ' +
                    (f"{len(hits)} test(s), first in {tests[hits[0]]}" if hits else
                     "no such test in tests/**/*.bats")))
for name, rel in sorted(tests.items(), key=lambda t: (t[1], t[0])):
    if rel in ATTACK_SUITES:
        results.append((name in used, f'{rel}: "{name}" is in SECURITY.md\'s table'))

print(f"1..{len(results)}")
for i, (ok, what) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {what}")
sys.exit(0 if all(ok for ok, _ in results) else 1)

#!/usr/bin/env python3
"""Run commands in interleaved rounds and record wall and CPU time of each run.

usage: bench/paired.py OUT.json ROUNDS -n LABEL [-p PREPARE] CMD [-n LABEL [-p PREPARE] CMD ...]

For tables whose cases take seconds and write to the disk (unpack, fetch), a hyperfine run
of each case in turn lets one case pay for another's dirty pages and puts a slow minute of
this shared machine on whichever case ran then. Here every round runs every case once, the
order rotated by one each round (A B C, B C A, ...), so the cases of a round meet the same
machine; report.py takes the ratio of each round and reports their median and range.

Before each timed run: PREPARE (sh -c, untimed), then sync(1) and a wait until the
kernel's Dirty + Writeback pages are under SETTLE_KB (or SETTLE_TIMEOUT s passed), so no
case starts with another's writeback in flight. CPU time is user + sys of the command and
everything it waited for (wait4's rusage): the figure the machine's noise disturbs least;
"written" is the bytes they sent to storage (ru_oublock, 512-byte blocks; 0 on tmpfs).
"""
import json
import os
import subprocess
import sys
import time

SETTLE_KB = 8 * 1024
SETTLE_TIMEOUT = 30.0


def dirty_kb():
    kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            if key in ("Dirty", "Writeback"):
                kb += int(value.split()[0])
    return kb


def settle():
    os.sync()
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while dirty_kb() > SETTLE_KB and time.monotonic() < deadline:
        time.sleep(0.05)


def timed(cmd):
    """Wall seconds, user and sys seconds and bytes written of sh -c CMD; dies if it fails."""
    t0 = time.monotonic()
    proc = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench/paired.py: failed ({status:#x}): {cmd}")
    return wall, ru.ru_utime, ru.ru_stime, ru.ru_oublock * 512


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out, rounds, args = argv[0], int(argv[1]), argv[2:]
    cases = []
    while args:
        if args[0] != "-n" or len(args) < 3:
            sys.exit("bench/paired.py: expected -n LABEL [-p PREPARE] CMD")
        label, args = args[1], args[2:]
        prepare = None
        if args[0] == "-p":
            prepare, args = args[1], args[2:]
        cases.append({"label": label, "prepare": prepare, "command": args[0]})
        args = args[1:]
    runs = []  # one dict per round: label -> {wall, user, sys}
    for r in range(rounds):
        result = {}
        for i in range(len(cases)):
            case = cases[(r + i) % len(cases)]
            if case["prepare"]:
                subprocess.run(["sh", "-c", case["prepare"]], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            settle()
            wall, user, sys_, written = timed(case["command"])
            result[case["label"]] = {"wall": wall, "user": user, "sys": sys_,
                                     "written": written}
            print(f"[paired {os.path.basename(out)} round {r + 1}] {case['label']}: "
                  f"{wall:.2f} s wall, {user + sys_:.2f} s CPU", file=sys.stderr)
        runs.append(result)
    with open(out, "w") as f:
        json.dump({"cases": cases, "rounds": runs}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])

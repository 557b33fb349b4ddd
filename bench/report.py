#!/usr/bin/env python3
"""Turn bench/run's work directory into RESULTS.md and the plot's data file."""
import json
import os
import re
import statistics
import sys

work, out, dat = sys.argv[1:4]


def read(name, default=""):
    try:
        with open(os.path.join(work, name)) as f:
            return f.read().strip()
    except OSError:
        return default


def load_results(name):
    """hyperfine's results for NAME: one run (NAME.json), or rounds (NAME.r1.json ...);
    [] when not measured."""
    paths = [os.path.join(work, "json", name + ".json")]
    if not os.path.exists(paths[0]):
        paths = []
        while os.path.exists(os.path.join(work, "json", f"{name}.r{len(paths) + 1}.json")):
            paths.append(os.path.join(work, "json", f"{name}.r{len(paths) + 1}.json"))
    rounds = []
    for path in paths:
        with open(path) as f:
            rounds.append(json.load(f)["results"])
    return rounds


def table(name, rounds, title, ref, note=""):
    """A Markdown table for one hyperfine run, or for rounds of one (bench/run hf_rounds):
    then each case pools its runs, and its ratio is the median of the per-round ratios
    of means, with their range. Returns (markdown, [(label, ratio)])."""
    order = [ref] + [c for c in [r["command"] for r in rounds[0]] if c != ref]
    per = {c: [] for c in order}       # per-round ratios
    times = {c: [] for c in order}     # pooled run times
    for res in rounds:
        by = {r["command"]: r for r in res}
        for c in order:
            per[c].append(by[c]["mean"] / by[ref]["mean"])
            times[c] += by[c]["times"]
    base = statistics.mean(times[ref])
    lines = [f"### {title}", ""]
    if note:
        lines += [note, ""]
    multi = len(rounds) > 1
    if multi:
        lines += [f"{len(rounds)} rounds of hyperfine, the order of the cases rotated each "
                  "round; mean ± σ and min … max over all runs of a case; the ratio is the "
                  "median of the per-round ratios of means, with their range.", ""]
    lines += ["| case | mean ± σ | min … max | runs | ratio to " + ref + " |" +
              (" rounds' range |" if multi else ""),
              "|---|---|---|---|---|" + ("---|" if multi else "")]
    ratios = []
    unit, k = ("ms", 1e3) if base < 1 else ("s", 1)
    for c in order:
        t = times[c]
        ratio = statistics.median(per[c])
        ratios.append((c, ratio))
        sd = statistics.stdev(t) if len(t) > 1 else 0
        lines.append(f"| {c} | {statistics.mean(t)*k:.2f} ± {sd*k:.2f} {unit} "
                     f"| {min(t)*k:.2f} … {max(t)*k:.2f} {unit} | {len(t)} "
                     f"| **{ratio:.2f}x** |" +
                     (f" {min(per[c]):.2f} … {max(per[c]):.2f} |" if multi else ""))
    lines += ["", "<details><summary>exact commands</summary>", "", "```"]
    for c in order:
        lines.append(f"{c}: {cmdline(name + ('.r1' if multi else ''), c)}")
    lines += ["```", "", "</details>", ""]
    return "\n".join(lines), ratios


def paired_table(name, title, ref, note=""):
    """A Markdown table for bench/paired.py's rounds (NAME.paired.json), or None when not
    measured: per case the median wall and CPU (user + sys) time over the rounds, and the
    median of the per-round ratios to REF, with their range, for both."""
    path = os.path.join(work, "json", name + ".paired.json")
    if not os.path.exists(path):
        return None, []
    with open(path) as f:
        data = json.load(f)
    rounds = data["rounds"]
    cpu = lambda r: r["user"] + r["sys"]
    lines = [f"### {title}", ""]
    if note:
        lines += [note, ""]
    lines += [f"{len(rounds)} rounds, each running every case once, the order rotated each "
              "round; `sync` and settled writeback before every run; each run removes what it "
              "made. Times are medians over the rounds (min … max); a ratio is the median of "
              "the per-round ratios to " + ref + ", with their range.", "",
              "| case | wall | CPU (user+sys) | wall ratio | range | CPU ratio | range |",
              "|---|---|---|---|---|---|---|"]
    ratios = []
    cases = sorted(data["cases"], key=lambda case: case["label"] != ref)
    for case in cases:
        c = case["label"]
        walls = [r[c]["wall"] for r in rounds]
        cpus = [cpu(r[c]) for r in rounds]
        rw = [r[c]["wall"] / r[ref]["wall"] for r in rounds]
        rc = [cpu(r[c]) / cpu(r[ref]) for r in rounds]
        ratios.append((c, statistics.median(rw)))
        lines.append(f"| {c} | {statistics.median(walls):.2f} s ({min(walls):.2f} … "
                     f"{max(walls):.2f}) | {statistics.median(cpus):.2f} s ({min(cpus):.2f} … "
                     f"{max(cpus):.2f}) | **{statistics.median(rw):.2f}x** | "
                     f"{min(rw):.2f} … {max(rw):.2f} | **{statistics.median(rc):.2f}x** | "
                     f"{min(rc):.2f} … {max(rc):.2f} |")
    lines += ["", "<details><summary>exact commands</summary>", "", "```"]
    for case in cases:
        lines.append(f"{case['label']}: {hide_ids(case['command'])}")
    lines += ["```", "", "</details>", ""]
    return "\n".join(lines), ratios


def strace_summary():
    """The system calls of one bsdtar -x and one create of the same archive (strace -c -f):
    the total and the calls that differ most."""
    counts = {}
    for who, name in (("bsdtar -x", "strace-bsdtar.txt"), ("enter-devroot create", "strace-edr.txt")):
        calls = {}
        for line in read(name).splitlines():
            f = line.split()
            if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
                calls[f[-1]] = int(f[3])
        counts[who] = calls
    if not all(counts.values()):
        return []
    a, b = counts["bsdtar -x"], counts["enter-devroot create"]
    names = sorted(set(a) | set(b), key=lambda n: -abs(a.get(n, 0) - b.get(n, 0)))[:12]
    lines = ["### 3e. System calls of one unpack of the .tar.zst (`strace -c -f`)", "",
             "| call | bsdtar -x | enter-devroot create |", "|---|---|---|"]
    for n in names:
        lines.append(f"| {n} | {a.get(n, 0)} | {b.get(n, 0)} |")
    lines.append(f"| **all calls** | **{sum(a.values())}** | **{sum(b.values())}** |")
    return lines + [""]


def hide_ids(cmd):
    return re.sub(r"--reuid=[1-9]\d* --regid=[1-9]\d*", "--reuid=U --regid=G", cmd)


def cmdline(name, label):
    return hide_ids(commands.get((name, label), "(see bench/run)"))


commands = {}


def load_commands():
    """bench/run passes the exact commands; hyperfine 1.15 does not export them with -n."""
    for line in read("commands.txt").splitlines():
        name, label, cmd = line.split("\t", 2)
        commands[(name, label)] = cmd


load_commands()
md = ["# Benchmark results", "",
      f"Generated by `bench/run` (one run, {int(read('wall', '0')) // 60} min "
      f"{int(read('wall', '0')) % 60} s wall) from commit `{read('commit')}`, "
      f"`{read('version')}`.",
      f"Load averages (1, 5, 15 min) at the start and the end of the run: {read('load', 'not recorded')}.",
      "Host: Debian 12, 2 shared cores, kernel " + os.uname().release +
      " without the chroot patch, so enter-devroot uses its user-namespace fallback.",
      "Tables 1 and 2 are one hyperfine invocation (its commands run back to back, each after "
      "its warmup, in this same bench run), or rotated rounds of one (1a, 1b); tables 3 and "
      "4a are paired rounds (bench/paired.py: every case once per round, order rotated, "
      "writeback settled before each run, wall and CPU time). Only the **ratios** are meant "
      "to be compared: the machine has 2 cores shared with other jobs, and absolute times "
      "move between runs.",
      "Unprivileged cases run as the bench user through `setpriv --reuid=U --regid=G "
      "--clear-groups`; the root reference goes through `setpriv --reuid=0 ...` so the "
      "wrapper's exec cost is in every row.", ""]
plot = []
sections = [
    ("enter-bb", "1a. Enter latency, busybox root (`/bin/true`)", "chroot (root)", ""),
    ("enter-deb", "1b. Enter latency, Debian bookworm root (`/bin/true`)", "chroot (root)", ""),
    ("inside-find", "2a. Inside the root: `find /usr` over the Debian root", "chroot (root)", ""),
    ("inside-exec", "2b. Inside the root: a shell loop of 300 execs of /bin/true",
     "chroot (root)", ""),
    ("inside-cc", "2c. Inside the root: compile 32 generated C files with gcc -O2 "
     "(debian-bookworm-build)", "chroot (root)", ""),
    ("unpack-zst", "3a. Unpack the Debian root, .tar.zst", "bsdtar -x", ""),
    ("unpack-gz", "3b. Unpack the Debian root, .tar.gz", "bsdtar -x", ""),
    ("unpack-xz", "3c. Unpack the Debian root, .tar.xz", "bsdtar -x", ""),
    ("unpack-second", "3d. A second create from the same .tar.zst, on XFS with reflink "
     "(loop-mounted image)", "bsdtar -x",
     "The first create unpacks and keeps a reflinked copy of the tree in the cache "
     "(`cache clean` before each run); the second finds that copy (the archive is hashed "
     "first) and clones it with FICLONE: only metadata is written. " + read("xfs.note")),
    ("guest", "1c. Enter latency in the QEMU guest, patched kernel, busybox root (TCG-emulated: "
     "compare ratios within this table only)", "chroot (root)",
     "`bench/guest`: qemu-system-x86_64 -accel tcg, 1 vCPU, fs.unprivileged_chroot=1, user "
     "namespaces on. Commands as in 1a, run in the guest by bench/guest-init; "
     "`--mode chroot` is the patched kernel's unprivileged chroot, `--mode userns` the "
     "fallback."),
    ("fetch", "4a. Fetch the debian-bookworm-build template (.tar.zst) from nginx on 127.0.0.1",
     "curl -o + bsdtar -x", "enter-devroot's row downloads, verifies the SHA-256 and unpacks "
     "(create --from URL --sha256), then removes the root and its cache: the reference, "
     "`curl -o + bsdtar -x` (then `rm -rf`), does the same work minus the check; `curl -o` "
     "alone is the download floor."),
]
md.append("## Results\n")
for name, title, ref, note in sections:
    text, ratios = paired_table(name, title, ref, note)
    if text is not None:
        md.append(text)
        plot += [(name, label, ratio) for label, ratio in ratios if label != ref]
        if name == "unpack-xz":
            md += strace_summary()
        continue
    rounds = load_results(name)
    if not rounds:
        md += [f"### {title}", "", "_not measured in this run_", ""]
        continue
    text, ratios = table(name, rounds, title, ref, note)
    md.append(text)
    for label, ratio in ratios:
        if label != ref:
            plot.append((name, label, ratio))

# Resume: bytes the server sent, from its access log.
log = read("resume.log")
size = int(read("resume.size", "0") or 0)
sent = [(m.group(1), int(m.group(2)), m.group(3))
        for m in re.finditer(r"^(\S+ \S+) \S+ status=\d+ sent=(\d+) range=(\S*)", log, re.M)]
md += ["### 4b. Resume after an interruption", "",
       "`enter-devroot create r --from http://127.0.0.1:PORT/slow/t.tar.zst --sha256 HEX` "
       "killed by SIGINT after 5 s (server throttled to 8 MiB/s), then run again. "
       "Bytes sent by nginx (`$body_bytes_sent` in its access log):", "",
       "| request | Range | bytes sent |", "|---|---|---|"]
for req, n, rng in sent:
    md.append(f"| {req} | {rng or '-'} | {n} |")
total = sum(n for _, n, _ in sent)
if size:
    md += ["", f"File size {size} bytes; total sent {total} bytes = "
           f"**{total / size:.3f}x** the file (1.000x means the resume sent only the remainder).",
           ""]

# Memory.
md += ["## 5. Peak memory of create", "",
       "`/usr/bin/time -v enter-devroot create NAME --from FILE --quiet`, one run each:", "",
       "| archive | size | max RSS |", "|---|---|---|"]
sizes = read("mem.sizes").split()
for i, (n, label) in enumerate([("minbase", "Debian root .tar.zst"),
                                ("big", "2 GiB .tar of 64 MiB random files")]):
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", read(f"mem-{n}.txt"))
    sz = f"{int(sizes[i]) / 2**20:.0f} MiB" if i < len(sizes) else "?"
    md.append(f"| {label} | {sz} | {int(m.group(1)) / 1024:.1f} MiB |" if m else
              f"| {label} | {sz} | not measured |")
md.append("")
md += [open(os.path.join(os.path.dirname(out), "NOTES.md")).read()] \
    if os.path.exists(os.path.join(os.path.dirname(out), "NOTES.md")) else []
# The tables of runs of their own (bench/oci-pull, dirty-create, ci-jobs, slurm-jobs), each
# between <!-- NAME --> and <!-- /NAME --> markers, are kept as they were.
if os.path.exists(out):
    for kept in re.finditer(r"<!-- ([a-z-]+) -->.*?<!-- /\1 -->", open(out).read(), re.S):
        md += ["", kept.group(0)]
with open(out, "w") as f:
    f.write("\n".join(md) + "\n")
with open(dat, "w") as f:
    for name, label, ratio in plot:
        f.write(f'"{name}: {label}" {ratio:.4f}\n')

#!/usr/bin/env python3
"""bench/instant-roots' work directory to its section of RESULTS.md (between the
<!-- instant-roots --> markers, added at the end when absent). Called by bench/instant-roots.

usage: instant-report.py WORK RESULTS COMMIT WALL LOAD MIB LAYOUT_BYTES QUICK PODMAN_OK
       PODMAN_WHY PODMAN_DRIVER SQFS_HOW CH_VERSION PODMAN_VERSION BWRAP_VERSION HOST
       ROUNDS LAT_RUNS [MARKER ROOTFS]

MARKER (default instant-roots) names the markers; ROOTFS, when given, is the tarball the
image was made of (its only layer), described instead of the generated one."""
import json
import re
import statistics
import sys

(work, results, commit, wall, load, mib, layout, quick, podman_ok, podman_why, podman_driver,
 sqfs_how, ch_version, podman_version, bwrap_version, host, rounds, lat_runs) = sys.argv[1:19]
marker = sys.argv[19] if len(sys.argv) > 19 else "instant-roots"
rootfs = sys.argv[20] if len(sys.argv) > 20 else ""


def paired(name, ref):
    """Per case: median wall and CPU over the rounds, and the median of the per-round
    ratios to REF with their range (as report.py's paired tables)."""
    data = json.load(open(f"{work}/json/{name}.paired.json"))
    rs = data["rounds"]
    cpu = lambda r: r["user"] + r["sys"]
    lines = ["| case | wall | CPU (user+sys) | wall ratio | range | CPU ratio | range |",
             "|---|---|---|---|---|---|---|"]
    cmds = []
    for case in data["cases"]:
        c = case["label"]
        walls = [r[c]["wall"] for r in rs]
        cpus = [cpu(r[c]) for r in rs]
        rw = [r[c]["wall"] / r[ref]["wall"] for r in rs]
        rc = [cpu(r[c]) / max(cpu(r[ref]), 1e-3) for r in rs]
        lines.append(f"| {c} | {statistics.median(walls):.3f} s ({min(walls):.3f} … {max(walls):.3f}) "
                     f"| {statistics.median(cpus):.3f} s ({min(cpus):.3f} … {max(cpus):.3f}) "
                     f"| **{statistics.median(rw):.2f}x** | {min(rw):.2f} … {max(rw):.2f} "
                     f"| **{statistics.median(rc):.2f}x** | {min(rc):.2f} … {max(rc):.2f} |")
        cmds.append(f"{c}: " + (f"[prepare: {case['prepare']}] " if case["prepare"] else "") + case["command"])
    return "\n".join(lines), cmds


def rounds_table(name, ref):
    """Rotated hyperfine rounds (NAME.r1.json ...): pooled times per case, the median of the
    per-round ratios of means to REF with their range (as report.py's table)."""
    res = []
    i = 1
    while True:
        try:
            res.append(json.load(open(f"{work}/json/{name}.r{i}.json"))["results"])
        except OSError:
            break
        i += 1
    order = [ref] + [r["command"] for r in res[0] if r["command"] != ref]
    per = {c: [] for c in order}
    times = {c: [] for c in order}
    for rnd in res:
        by = {r["command"]: r for r in rnd}
        for c in order:
            per[c].append(by[c]["mean"] / by[ref]["mean"])
            times[c] += by[c]["times"]
    lines = ["| case | mean ± σ | min … max | runs | ratio to " + ref + " | rounds' range |",
             "|---|---|---|---|---|---|"]
    for c in order:
        t = [x * 1e3 for x in times[c]]
        lines.append(f"| {c} | {statistics.mean(t):.2f} ± {statistics.stdev(t):.2f} ms "
                     f"| {min(t):.2f} … {max(t):.2f} ms | {len(t)} | **{statistics.median(per[c]):.2f}x** "
                     f"| {min(per[c]):.2f} … {max(per[c]):.2f} |")
    return "\n".join(lines), len(res)


def human(b):
    if b >= 2**30:
        return f"{b / 2**30:.2f} GiB"
    return f"{b / 2**20:.0f} MiB" if b >= 2**20 else f"{b / 2**10:.0f} KiB"


t1, cmds1 = paired("create-first", "ch-run DIR")
disk = [l.rstrip("\n").split("\t") for l in open(f"{work}/disk.tsv")]
pod = podman_ok == "1"
head = ("| roots | enter-devroot (store + cache) | charliecloud: directory copies | "
        "charliecloud: one SquashFS | podman (containers of one image) |")
t2 = [head, "|---|---|---|---|---|"]
for n, edr, ch, sq, pd in disk:
    cell = lambda b: f"{int(b):,} ({human(int(b))})"
    t2.append(f"| {n} | {cell(edr)} | {cell(ch)} | {cell(sq)} | "
              f"{cell(pd) if pd != '-' else 'not measured'} |")
t2 = "\n".join(t2)
t3, nrounds = rounds_table("warm-run", "chroot (root)")
labels = open(f"{work}/warm-labels").read().splitlines()
wcmds = open(f"{work}/warm-cmds").read().splitlines()
one = int(disk[0][1])
twenty = int(disk[-1][1])

podman_note = (f"podman {podman_version}, rootless as the bench user, storage driver "
               f"`{podman_driver}`, runc (crun refuses this machine's hybrid cgroup hierarchy), cgroupfs, the image copied once from the layout with "
               f"`podman pull oci:`; `--network=host` (as ch-run and enter-devroot, which keep the host's network; slirp4netns cannot open /dev/net/tun here)." if pod else
               f"**podman could not run rootless here**, so its rows are missing: {podman_why}")
heading = ("## 11. Roots from a cached image (bench/instant-roots; issue 28)" if not rootfs else
           "### 11g. The same tables for a whole root as the image (bench/instant-roots, "
           "EDR_BENCH_IMAGE_TARBALL)")
image_text = (f"one image of the busybox template and one generated gzip layer of {mib} MiB "
              f"(gen-layer.py: {int(mib) * 16:,} files of 64 KiB, half random, half text)"
              if not rootfs else
              f"one image whose only layer is `{rootfs}` ({mib} MiB unpacked)")
text = f"""<!-- {marker} -->
{heading}

{'Quick mode (`EDR_BENCH_QUICK=1`): ' if quick == '1' else ''}{image_text},
{human(int(layout))} as an OCI layout on local disk (tests/oci/mkimage.py).
Commit {commit}; {host}; {wall} s wall. **Load average (1, 5, 15 min) at start / end:
{load}**: ratios within one table only,
not the absolute times, nor a comparison with another run. charliecloud `{ch_version}`,
bwrap {bwrap_version}; {podman_note}

11a. Create and first `run -- /bin/true` from the cached image, each tool starting from its
cached form of it: charliecloud from a directory made once (a copy of the same tree) and from
a SquashFS of it ({sqfs_how}); podman from its storage, where the image was put once;
`enter-devroot create --from oci:` (the layout is local and its layers were put in the layer
store once before) + `run`: with `--overlay` an overlay root of the stored layers, nothing
copied; with `--flat` (the default) a directory the layers are copied into (reflinked where
the filesystem can: not here); and `run --ephemeral --from oci:`, which makes no root: the
job mounts the stored layers itself over a tmpfs upper. {rounds} paired rounds (bench/paired.py: every case
once per round, the order rotated, `sync` and settled writeback before each run; the
create's `remove` is in its untimed prepare). Times are medians (min … max); a ratio is
the median of the per-round ratios to `ch-run DIR`, with their range.

{t1}

<details><summary>exact commands</summary>

```
""" + "\n".join(cmds1) + f"""
```

</details>

11b. Disk used by 1, 5 and 20 roots of the image, in bytes (`du -sx --block-size=1`, one
`du` over each tool's whole state, so hard links count once): enter-devroot's data and cache
directories (roots made with `create --from oci:`; the cache holds what the import kept);
charliecloud directory copies (`cp -a`, what a root per job costs it); one SquashFS file,
which every `ch-run` mounts read-only, so it does not grow with the count;
{'podman' + chr(39) + 's storage (image + containers made with `podman create`)' if pod else 'podman: not measured (above)'}.

{t2}

One more enter-devroot root costs {human((twenty - one) / 19)} here: an overlay root is its own
upper directory (the account create adds), its image's layers are stored once.

11c. Warm `run` latency (`/bin/true`, the root from this image made before): {nrounds} rounds of
hyperfine, {lat_runs} runs per case, the order of the cases rotated each round (as table
1a); the ratio is the median of the per-round ratios of means, with their range. The
reference is `chroot` as root through the same setpriv.

{t3}

<details><summary>exact commands</summary>

```
""" + "\n".join(f"{l}: {c}" for l, c in zip(labels, wcmds)) + """
```

</details>
<!-- /""" + marker + " -->"
old = open(results).read()
if f"<!-- {marker} -->" in old:
    old = re.sub(f"<!-- {marker} -->.*?<!-- /{marker} -->", lambda m: text, old, flags=re.S)
else:
    old = old.rstrip("\n") + "\n\n" + text + "\n"
open(results, "w").write(old)

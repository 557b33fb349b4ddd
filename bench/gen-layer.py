#!/usr/bin/env python3
"""Write an image layer for bench/oci-pull: a tar of FILES files under DIR/, SIZE_MIB MiB in
all, half random and half text so that gzip has work to do, as toolchain layers do.

usage: gen-layer.py OUT.tar DIR SIZE_MIB FILES SEED"""
import io
import random
import sys
import tarfile

out, top, size_mib, files, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(4096)]
per_file = size_mib * (1 << 20) // files

with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
    for d in range(files // 100 + 1):
        info = tarfile.TarInfo(f"{top}/d{d:03}")
        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1700000000
        t.addfile(info)
    for i in range(files):
        half = per_file // 2
        text = b" ".join(rng.choice(words) for _ in range(half // 5))[:half]
        data = rng.randbytes(per_file - len(text)) + text
        info = tarfile.TarInfo(f"{top}/d{i // 100:03}/f{i:05}")
        info.size, info.mode, info.mtime = len(data), 0o644, 1700000000
        t.addfile(info, io.BytesIO(data))

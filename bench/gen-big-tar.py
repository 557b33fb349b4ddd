#!/usr/bin/env python3
"""Write a tar of SIZE_MIB MiB in 64 MiB members of incompressible-ish data, streamed."""
import os
import sys
import tarfile

path, size_mib = sys.argv[1], int(sys.argv[2])
member = 64 << 20
block = os.urandom(1 << 20)


class Source:
    """Yields `n` bytes: a random MiB, varied per MiB so no two blocks repeat."""

    def __init__(self, n, seed):
        self.left, self.i, self.seed = n, 0, seed

    def read(self, k):
        k = min(k, self.left)
        out = bytearray()
        while len(out) < k:
            self.i += 1
            out += (self.seed * 1000003 + self.i).to_bytes(8, "little") + block[8:]
        self.left -= k
        return bytes(out[:k])


tmp = path + ".part"
with tarfile.open(tmp, "w", format=tarfile.GNU_FORMAT) as t:
    for n in range(size_mib * (1 << 20) // member):
        info = tarfile.TarInfo(f"big/f{n:03d}")
        info.size = member
        info.mode = 0o644
        t.addfile(info, Source(member, n))
os.rename(tmp, path)

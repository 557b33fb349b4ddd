#!/usr/bin/env python3
"""Compare a devroot with what `podman export` wrote for the same image, path by path.

    compare-export.py EXPORT.tar ROOT [--ignore PATH]... [--extra PATH]...

Prints one line per difference and exits 1 if there is any. Compared: the set of paths,
each one's type, permission bits, a symlink's target, a regular file's bytes and mtime,
which paths are hard links of each other (as the export's link entries say), and the
user.* extended attributes the export carries. Not compared, because they differ by
design (SECURITY.md, enter-devroot(1)): owners (a devroot's files are the user's),
setuid/setgid bits (dropped), device nodes and sockets (skipped, as their hard links),
directory times (create's own edits change some). --ignore PATH leaves out PATH and
everything under it on both sides (what podman adds to a container: /dev, /proc, ...);
--extra PATH is allowed in the root only (create's additions: the user's home directory),
and its contents if it is a directory.

The root is made readable as it is walked (directories 0000 or 0311 hold entries too): its
modes are read first, so the comparison sees them as they were.
"""
import hashlib
import os
import stat
import sys
import tarfile

KEPT_BITS = 0o7777 & ~(stat.S_ISUID | stat.S_ISGID)


def norm(name):
    parts = [p for p in name.split("/") if p not in ("", ".")]
    return "/".join(parts)


def under(path, prefixes):
    return any(path == p or path.startswith(p + "/") for p in prefixes)


def digest_fileobj(f):
    h = hashlib.sha256()
    for block in iter(lambda: f.read(1 << 16), b""):
        h.update(block)
    return h.hexdigest()


def read_export(path, ignore):
    """{path: (kind, mode, target-or-digest, mtime, xattrs)} and [(link, target)]."""
    entries, links = {}, []
    with tarfile.open(path) as tar:
        for m in tar:
            p = norm(m.name)
            if p == "" or under(p, ignore):
                continue
            if m.ischr() or m.isblk():
                entries[p] = None  # skipped by design; links to it too
                continue
            xattrs = {k[len("SCHILY.xattr."):]: v for k, v in m.pax_headers.items()
                      if k.startswith("SCHILY.xattr.user.")}
            if m.islnk():
                links.append((p, norm(m.linkname)))
                continue
            if m.isdir():
                entries[p] = ("dir", m.mode & KEPT_BITS, None, None, xattrs)
            elif m.issym():
                entries[p] = ("symlink", None, m.linkname, None, xattrs)
            elif m.isfifo():
                entries[p] = ("fifo", m.mode & KEPT_BITS, None, None, xattrs)
            elif m.isreg():
                entries[p] = ("file", m.mode & KEPT_BITS, digest_fileobj(tar.extractfile(m)),
                              int(m.mtime), xattrs)
    for link, target in links:
        entries[link] = entries.get(target)
    return entries, links


def read_root(root, ignore):
    entries, inodes = {}, {}

    def visit(path, rel):
        st = os.lstat(path)
        inodes[rel] = (st.st_dev, st.st_ino)
        mode = stat.S_IMODE(st.st_mode)
        xattrs = {}
        if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            if not stat.S_ISDIR(st.st_mode) and not mode & stat.S_IRUSR:
                os.chmod(path, mode | stat.S_IRUSR)
            try:
                xattrs = {n: os.getxattr(path, n, follow_symlinks=False).decode(
                    "utf-8", "surrogateescape") for n in os.listxattr(path, follow_symlinks=False)
                    if n.startswith("user.")}
            except OSError:
                pass
        if stat.S_ISDIR(st.st_mode):
            if rel:
                entries[rel] = ("dir", mode, None, None, xattrs)
            if mode & 0o500 != 0o500:
                os.chmod(path, mode | 0o700)
            for name in sorted(os.listdir(path)):
                child = rel + "/" + name if rel else name
                if not under(child, ignore):
                    visit(os.path.join(path, name), child)
        elif stat.S_ISLNK(st.st_mode):
            entries[rel] = ("symlink", None, os.readlink(path), None, xattrs)
        elif stat.S_ISFIFO(st.st_mode):
            entries[rel] = ("fifo", mode, None, None, xattrs)
        elif stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                entries[rel] = ("file", mode, digest_fileobj(f), int(st.st_mtime), xattrs)
        else:
            entries[rel] = ("other", mode, None, None, xattrs)

    visit(root, "")
    return entries, inodes


def main(argv):
    export, root = argv[1], argv[2]
    ignore, extra = [], []
    rest = argv[3:]
    while rest:
        opt, value, rest = rest[0], norm(rest[1]), rest[2:]
        (ignore if opt == "--ignore" else extra).append(value)
    want, links = read_export(export, ignore)
    have, inodes = read_root(root, ignore)
    diffs = []
    for p in sorted(set(want) | set(have)):
        w, h = want.get(p, "absent"), have.get(p, "absent")
        if w is None:
            if h != "absent":
                diffs.append(f"{p}: a device node (or a link to one) in the export, {h[0]} in the root")
            continue
        if w == "absent":
            if not under(p, extra):
                diffs.append(f"{p}: only in the root ({h[0]})")
            continue
        if h == "absent":
            diffs.append(f"{p}: only in the export ({w[0]})")
            continue
        names = ("type", "mode", "target or content", "mtime", "user.* xattrs")
        for name, a, b in zip(names, w, h):
            if name == "mtime" and p in extra:
                continue
            if a != b:
                shown = (oct(a), oct(b)) if name == "mode" else (a, b)
                diffs.append(f"{p}: {name}: export {shown[0]!r}, root {shown[1]!r}")
    for link, target in links:
        if want.get(link) is not None and inodes.get(link) != inodes.get(target):
            diffs.append(f"{link}: a hard link to {target} in the export, not in the root")
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

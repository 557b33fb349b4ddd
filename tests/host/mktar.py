#!/usr/bin/python3
"""Write a tar archive whose entries are spelled out on the command line.

The host tests use it to craft hostile archives that GNU tar refuses to make
(names with "..", absolute names, a symlink named ".", hardlinks carrying data,
device nodes made without privileges).

usage: mktar.py [--gnu|--zip] OUT ENTRY...
  --gnu             GNU format (long names in ././@LongLink entries), not pax
  --zip             a zip file instead (only d and f entries)
  d NAME            directory
  f NAME DATA       regular file holding DATA
  l NAME TARGET     symlink
  L NAME TARGET     symlink carrying pax ACL and xattr headers (CVE-2021-23177)
  h NAME TARGET     hardlink
  H NAME TARGET DATA  hardlink that carries data (CVE-2016-5418)
  p NAME            FIFO
  c NAME / b NAME   character / block device (1,3 / 8,0)
  m MODE            octal mode for the next entry (default 0755 dirs, 0644 others)
  o UID             owner uid (and gid) for the following entries
  X NAME HEX        extended attribute NAME (value in hex) on the next entry, as GNU
                    tar --xattrs writes it (SCHILY.xattr.NAME); repeatable
"""
import io
import sys
import tarfile


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    fmt = tarfile.PAX_FORMAT
    if argv[1] == "--gnu":
        fmt = tarfile.GNU_FORMAT
        argv = argv[1:]
    elif argv[1] == "--zip":
        write_zip(argv[2], argv[3:])
        return
    out, args = argv[1], argv[2:]
    mode, owner, xattrs = None, 0, {}
    with tarfile.open(out, "w", format=fmt) as tar:
        i = 0
        while i < len(args):
            kind = args[i]
            if kind == "m":
                mode = int(args[i + 1], 8)
                i += 2
                continue
            if kind == "o":
                owner = int(args[i + 1])
                i += 2
                continue
            if kind == "X":
                # tarfile writes a value that is not UTF-8 byte for byte (hdrcharset=BINARY).
                xattrs["SCHILY.xattr." + args[i + 1]] = bytes.fromhex(
                    args[i + 2]).decode("utf-8", "surrogateescape")
                i += 3
                continue
            nargs = {"d": 1, "f": 2, "l": 2, "L": 2, "h": 2, "H": 3,
                     "p": 1, "c": 1, "b": 1}[kind]
            fields = args[i + 1:i + 1 + nargs]
            if len(fields) != nargs:
                sys.exit("mktar.py: %s: needs %d arguments" % (kind, nargs))
            i += 1 + nargs
            info = tarfile.TarInfo(fields[0])
            info.mtime = 1700000000
            info.uid = info.gid = owner
            info.uname = info.gname = "u%d" % owner if owner else "root"
            data = None
            if kind == "d":
                info.type = tarfile.DIRTYPE
            elif kind == "f":
                data = fields[1].encode()
            elif kind in "lL":
                info.type = tarfile.SYMTYPE
                info.linkname = fields[1]
                if kind == "L":
                    info.pax_headers = {
                        "SCHILY.acl.access":
                            "user::rwx,group::rwx,other::rwx,mask::rwx,user:0:rwx",
                        "SCHILY.xattr.user.edr-test": "pwned",
                    }
            elif kind in "hH":
                info.type = tarfile.LNKTYPE
                info.linkname = fields[1]
                if kind == "H":
                    data = fields[2].encode()
            elif kind == "p":
                info.type = tarfile.FIFOTYPE
            elif kind in "cb":
                info.type = tarfile.CHRTYPE if kind == "c" else tarfile.BLKTYPE
                info.devmajor, info.devminor = (1, 3) if kind == "c" else (8, 0)
            info.mode = mode if mode is not None else (
                0o755 if kind == "d" else 0o644)
            mode = None
            if xattrs:
                info.pax_headers = {**info.pax_headers, **xattrs}
                xattrs = {}
            if data is not None:
                info.size = len(data)
                # addfile() only copies data for the size in the header, which
                # is what we want even for a hardlink entry.
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)


def write_zip(out, args):
    """A zip holds names as given, "../" and leading "/" included."""
    import zipfile
    with zipfile.ZipFile(out, "w") as z:
        i = 0
        while i < len(args):
            if args[i] == "d":
                z.writestr(zipfile.ZipInfo(args[i + 1].rstrip("/") + "/"), b"")
                i += 2
            elif args[i] == "f":
                z.writestr(zipfile.ZipInfo(args[i + 1]), args[i + 2].encode())
                i += 3
            else:
                sys.exit("mktar.py: --zip: only d and f entries")


if __name__ == "__main__":
    main(sys.argv)

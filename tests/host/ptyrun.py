#!/usr/bin/env python3
"""Run a command on a new pseudo-terminal, as a user at a terminal would, and script it.

    ptyrun.py [--timeout S] STEP... -- CMD [ARG...]

STEP is one of
    expect:REGEX   wait until the output so far (since the last expect) matches REGEX
    send:TEXT      type TEXT; \\n, \\r and ^X (a control character, e.g. ^Z) are decoded
    sleep:S        wait S seconds
    fg:NAME        wait until the terminal's foreground process group is led by a process
                   named NAME (/proc/PGID/comm), or, as fg:!NAME, by one not named NAME
                   (a ^Z the terminal sends after it goes to that group, not the shell)

The command runs in a new session with the pty as its controlling terminal and as the
foreground process group, so job control, ^C and ^Z behave as in an interactive login.
Everything the command wrote goes to stdout (with \\r removed); the exit status is the
command's (128+N for a signal), or 124 if a step or the command timed out (the output so
far is printed, and a line on stderr says which step).
"""
import os
import pty
import re
import select
import signal
import sys
import time


def decode(text):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in "nr\\":
            out.append({"n": "\n", "r": "\r", "\\": "\\"}[text[i + 1]])
            i += 2
        elif c == "^" and i + 1 < len(text) and text[i + 1].isalpha():
            out.append(chr(ord(text[i + 1].upper()) - 64))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out).encode()


def main():
    args = sys.argv[1:]
    timeout = 20.0
    if args[:1] == ["--timeout"]:
        timeout = float(args[1])
        args = args[2:]
    split = args.index("--")
    steps, cmd = args[:split], args[split + 1:]

    pid, fd = pty.fork()
    if pid == 0:
        # Python ignores SIGPIPE and SIGXFSZ; a program exec'd from it would inherit that.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        os.execvp(cmd[0], cmd)

    seen = bytearray()  # everything read
    mark = 0  # where the next expect starts looking
    deadline = time.monotonic() + timeout

    def pump(wait):
        r, _, _ = select.select([fd], [], [], wait)
        if not r:
            return True
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: every holder of the pty's other end closed it
            return False
        if not data:
            return False
        seen.extend(data)
        return True

    def finish(status):
        sys.stdout.write(seen.decode(errors="replace").replace("\r", ""))
        sys.stdout.flush()
        sys.exit(status)

    def give_up(what):
        sys.stderr.write("ptyrun: timed out %s\n" % what)
        os.kill(pid, 9)
        finish(124)

    for step in steps:
        kind, _, arg = step.partition(":")
        if kind == "expect":
            pattern = re.compile(arg.encode())
            while not pattern.search(seen, mark):
                if time.monotonic() > deadline or not pump(0.1) and not pattern.search(seen, mark):
                    if not pattern.search(seen, mark):
                        give_up("or ended waiting for %r" % arg)
            mark = pattern.search(seen, mark).end()
        elif kind == "send":
            os.write(fd, decode(arg))
        elif kind == "fg":
            want, negate = (arg[1:], True) if arg.startswith("!") else (arg, False)
            while True:
                try:
                    with open("/proc/%d/comm" % os.tcgetpgrp(fd)) as f:
                        name = f.read().strip()
                except OSError:
                    name = None
                if name is not None and (name == want) != negate:
                    break
                if time.monotonic() > deadline:
                    give_up("waiting for the foreground job %r (it is %r)" % (arg, name))
                pump(0.05)
        elif kind == "sleep":
            end = time.monotonic() + float(arg)
            while time.monotonic() < end:
                pump(0.05)
        else:
            sys.exit("ptyrun: unknown step %r" % step)

    # Read until the pty closes (EOF or EIO), then reap; both within the deadline.
    while pump(0.1):
        if time.monotonic() > deadline:
            give_up("waiting for the command to end")
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            give_up("waiting for the command to exit")
        time.sleep(0.05)
    code = os.waitstatus_to_exitcode(status)
    finish(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Check the samples in the README (and docs/) against a real kpemu, so
that they cannot go stale. scripts/e2e.sh runs it.

    python3 scripts/readme-samples.py [FILE...]     (default: README.md)

A checked sample is the fenced block right after a line
`<!-- sample: TITLE -->`. In it, a line `$ CMD` is a command, and the lines
after it, up to the next command, are what it prints; a line `...` stands
for any number of lines. The block whose first command is `$ make run` is
checked against what `make run` prints (make's lines, then kpemu's log):
this script starts it, with MOUNT set to a fresh directory, and runs every
other command with bash, in order, against that mount (`/tmp/dbg` in a
command is that directory; in what a command prints, that directory is
`/tmp/dbg` again). A command that should print something is run again until
it does, within the bound (the guest may not have got there yet), so it
must change nothing; one that should print nothing is run once and must
succeed silently.

Prints "PASS TITLE: CMD" or "FAIL TITLE: CMD" and the difference, one
check a line; exits 1 if any failed.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README_MOUNT = "/tmp/dbg"
# Bounds only turn a hang into a failure (as E2E_BOUND in e2e.sh): a loaded
# machine runs the guest many times slower.
BOUND = float(os.environ.get("E2E_BOUND", "240"))

# What varies from run to run, or from one build of the guest image to the
# next, and so is normalised, in the sample and in the output alike:
NORMALISE = [
    # slog's wall-clock time stamp.
    (re.compile(r"^time=\S+ "), "time=T "),
    # Kernel addresses (16 hex digits, as kallsyms, kprobes/list and the
    # log print them): fixed for one guest image, but they move whenever
    # kernel/image changes, and the sample is about structure and symbols.
    (re.compile(r"\b(0x)?[0-9a-f]{16}\b"), r"\1ADDR"),
    # The guest's printk time stamps and its instruction count at ready:
    # fixed for one guest image, but any change to kernel/image moves them
    # (as the addresses); the lines and their order stay checked.
    (re.compile(r'line="\[ *\d+\.\d{6}\] '), 'line="[T] '),
    (re.compile(r"\binstructions=\d+\b"), "instructions=N"),
    # A trace line's TASK-PID, CPU and time stamp: which task hits first, on
    # which CPU and when depends on how the host scheduled the guest against
    # the shell; so does need-resched (the second flag: a tick that just
    # asked for a reschedule). The other flags and the record stay checked.
    (re.compile(r"^ *\S.{0,15}-\d+ +\[\d{3}\] (\S)\S(\S{3}) +\d+\.\d{6}: "),
     r"TASK-PID [CPU] \1.\2 TIME: "),
    # How many events the buffer holds: how long the guest ran.
    (re.compile(r"entries-in-buffer/entries-written: \d+/\d+"),
     "entries-in-buffer/entries-written: N/N"),
    # kprobe_profile's hits: how long the guest ran; but no hits is not
    # normalised, so a sample that shows hits waits for them.
    (re.compile(r"^(  \S+ +)0*[1-9]\d*( +\d+)$"), r"\1N\2"),
]
# kprobes/list's lines are in Linux's hash order of their addresses, which
# changes with the image as the addresses do: consecutive ones compare as
# a set.
LIST_LINE = re.compile(r"^ADDR  [kjr]  ")


def normalise(lines):
    out = []
    for line in lines:
        for pat, rep in NORMALISE:
            line = pat.sub(rep, line)
        out.append(line)
    i = 0
    while i < len(out):
        j = i
        while j < len(out) and LIST_LINE.match(out[j]):
            j += 1
        if j > i:
            out[i:j] = sorted(out[i:j])
            i = j
        else:
            i += 1
    return out


def matches(want, got):
    """got matches want, where a "..." line of want matches any lines."""
    segs, seg = [], []
    for line in want:
        if line == "...":
            segs.append(seg)
            seg = []
        else:
            seg.append(line)
    segs.append(seg)
    if len(segs) == 1:
        return want == got
    first, last, middle = segs[0], segs[-1], segs[1:-1]
    if got[: len(first)] != first:
        return False
    pos, end = len(first), len(got) - len(last)
    if end < pos or (last and got[end:] != last):
        return False
    for seg in middle:
        if not seg:
            continue
        for i in range(pos, end - len(seg) + 1):
            if got[i : i + len(seg)] == seg:
                pos = i + len(seg)
                break
        else:
            return False
    return True


def samples(path):
    """(title, [(cmd, [expected line])]) for each marked block of path."""
    with open(path) as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^<!-- sample: (.*?) -->$", lines[i])
        i += 1
        if not m:
            continue
        if i >= len(lines) or not lines[i].startswith("```"):
            raise SystemExit(f"{path}:{i}: a sample marker must come right before a ``` block")
        i += 1
        steps = []
        while i < len(lines) and not lines[i].startswith("```"):
            line = lines[i]
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
            else:
                raise SystemExit(f"{path}:{i + 1}: a sample starts with a $ command")
            i += 1
        out.append((m.group(1), steps))
    return out


class Checker:
    def __init__(self):
        self.passed = self.failed = 0

    def report(self, ok, name, want=None, got=None):
        if ok:
            print(f"PASS {name}", flush=True)
            self.passed += 1
            return
        print(f"FAIL {name}", flush=True)
        for tag, lines in (("want", want), ("got", got)):
            if lines is not None:
                print(f"    {tag}:")
                for line in lines:
                    print(f"      |{line}")
        self.failed += 1

    def poll(self, produce, want, gone=lambda: False):
        """Re-run produce() until its normalised lines match want, or gone()
        says they never will; the last lines it produced."""
        want = normalise(want)
        end = time.monotonic() + BOUND
        while True:
            got = produce()
            if matches(want, normalise(got)):
                return True, got
            if gone() or time.monotonic() > end:
                return False, got
            time.sleep(0.1)


def main():
    files = sys.argv[1:] or [os.path.join(ROOT, "README.md")]
    blocks = []
    for path in files:
        blocks += samples(path)
    run_blocks = [b for b in blocks if b[1] and b[1][0][0] == "make run"]
    if len(run_blocks) != 1:
        raise SystemExit("want exactly one sample that starts with `$ make run`")
    c = Checker()
    mnt = tempfile.mkdtemp(prefix="kpemu-readme.")
    log = tempfile.NamedTemporaryFile(prefix="kpemu-readme-log.", delete=False)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    # Its own process group: the signal that stops kpemu reaches make too.
    make = subprocess.Popen(["make", "run", "MOUNT=" + mnt], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def unmounted(text):
        return text.replace(mnt, README_MOUNT)

    def read_log():
        with open(log.name) as f:
            return unmounted(f.read()).split("\n")[:-1]

    try:
        title, steps = run_blocks[0]
        # Once make has exited, its output is all there will be: the log
        # is read after make.poll() so that it holds all of it then.
        exited = False

        def make_output():
            nonlocal exited
            exited = make.poll() is not None
            return read_log()

        ok, got = c.poll(make_output, steps[0][1], gone=lambda: exited)
        if exited:
            got.append(f"(make exited with status {make.returncode})")
        c.report(ok, f"{title}: make run", steps[0][1], got)
        if not os.path.exists(os.path.join(mnt, "kprobes/list")):
            c.report(False, "make run mounts the tree", None, read_log())
            return c
        for title, steps in blocks:
            for cmd, want in steps:
                if cmd == "make run":
                    continue
                real = cmd.replace(README_MOUNT, mnt)

                def run():
                    p = subprocess.run(["bash", "-c", real], cwd=ROOT, capture_output=True, text=True)
                    out = unmounted(p.stdout + p.stderr).split("\n")
                    if out[-1] == "":
                        out.pop()
                    if p.returncode != 0:
                        out.append(f"(exit status {p.returncode})")
                    return out

                if want:
                    ok, got = c.poll(run, want)
                else:
                    got = run()
                    ok = got == []
                c.report(ok, f"{title}: {cmd}", want, got)
    finally:
        try:
            os.killpg(make.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        make.wait()
        # kpemu unmounts on SIGTERM; wait for it, then clean up.
        end = time.monotonic() + BOUND
        while os.path.ismount(mnt) and time.monotonic() < end:
            time.sleep(0.1)
        if os.path.ismount(mnt):
            c.report(False, "make run's kpemu unmounts on SIGTERM", None, read_log())
            subprocess.run(["umount", "-l", mnt])
        os.rmdir(mnt)
        os.unlink(log.name)
    return c


if __name__ == "__main__":
    checker = main()
    print(f"{checker.passed} passed, {checker.failed} failed")
    sys.exit(1 if checker.failed else 0)

"""Usage: cargo test ... 2>&1 | python3 scripts/lib/progress.py LOG

Passes a cargo test run's output through (and appends it to LOG), adding a line a person can
read every 30 seconds: which test binary is running, how many of its tests are done, how many
failed so far, and the time since the stage began. The run's own status is cargo's (the
caller's `pipefail`).
"""

import re
import sys
import threading
import time

INTERVAL = 30

RUNNING = re.compile(r"^running (\d+) tests?$")
BINARY = re.compile(r"^\s+Running (?:unittests )?(\S+)")
RESULT = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)")
# With one test thread, a verdict follows anything the test wrote straight to the terminal
# (a slow test's note) on a line of its own.
VERDICT = re.compile(r"^(ok|FAILED|ignored)$")


class Progress:
    def __init__(self):
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.binary = "tests"
        self.total = 0
        self.done = 0
        self.failed = 0

    def line(self, text):
        with self.lock:
            if match := BINARY.match(text):
                self.binary = match.group(1)
            elif match := RUNNING.match(text):
                self.total, self.done = int(match.group(1)), 0
            elif match := RESULT.match(text):
                self.done += 1
                self.failed += match.group(2) == "FAILED"
            elif match := VERDICT.match(text):
                self.done += 1
                self.failed += match.group(1) == "FAILED"

    def report(self):
        with self.lock:
            if not self.total:
                return None
            elapsed = int(time.monotonic() - self.started)
            failed = f", {self.failed} failed" if self.failed else ""
            return (
                f"-- {self.binary}: {self.done} of {self.total} tests done{failed}, "
                f"{elapsed // 60} min {elapsed % 60:02d} s into this stage"
            )


def main():
    log = open(sys.argv[1], "a", encoding="utf-8") if len(sys.argv) > 1 else None
    progress = Progress()
    finished = threading.Event()

    def tick():
        while not finished.wait(INTERVAL):
            if report := progress.report():
                print(report, flush=True)

    threading.Thread(target=tick, daemon=True).start()
    for raw in sys.stdin:
        sys.stdout.write(raw)
        sys.stdout.flush()
        if log:
            log.write(raw)
        progress.line(raw.rstrip("\n"))
    finished.set()
    if log:
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

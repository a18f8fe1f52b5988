"""The README's "Try it" block, run as pasted against an API, every answer checked as its
comment says: the checks of local-api/tests/api/server/readme.rs, which runs the same block
against the local server.

    python3 sam_local_try_it.py API_BASE_URL

Exits 1 with the block's output and what was wrong.
"""

import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def block():
    readme = (ROOT / "README.md").read_text()
    rest = readme.split("<!-- try-it -->", 1)[1]
    return rest.split("```sh\n", 1)[1].split("\n```", 1)[0]


def main():
    api = sys.argv[1]
    started = time.monotonic()
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block()],
        env={"API": api, "PATH": "/usr/bin:/bin:/usr/local/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    took = time.monotonic() - started
    out = run.stdout
    problems = []

    def check(ok, what):
        if not ok:
            problems.append(what)

    check(run.returncode == 0, f"the block exited {run.returncode}: {run.stderr[-2000:]}")
    answers = []
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                answers.append(json.loads(line))
            except ValueError:
                problems.append(f"not one JSON answer per line: {line[:200]}")
    check(len(answers) == 20, f"{len(answers)} answers, not 20")

    def some(test):
        return any(isinstance(a, dict) and test(a) for a in answers)

    def line_after(prefix):
        return next((l[len(prefix) :] for l in out.splitlines() if l.startswith(prefix)), None)

    check(line_after("stream: "), "the stream id was captured")
    check(
        some(
            lambda a: a.get("status") == "failed"
            and a.get("error") == "YouTube refused the key"
            and a.get("stream_key_last4") == "mnop"
        ),
        "the destination failed by the helper",
    )
    check(some(lambda a: a.get("platform") == "twitch" and a.get("status") == "active"),
          "the destination added, active")
    check("abcd-efgh-ijkl-mnop" not in out and "live_0123456789" not in out,
          "no stream key shown again")
    check(some(lambda a: a.get("status") == "ended"), "ended once")
    check(some(lambda a: a.get("end_reason") == "requested"), "the ended stream says why")
    check(some(lambda a: a.get("viewer_count") == 120 and a.get("status") == "live"),
          "the viewers helper")
    check(some(lambda a: a.get("status") == "error" and a.get("end_reason") == "provider_error"),
          "the fail helper")
    check(some(lambda a: isinstance(a.get("deliveries"), list)), "the delivery log")
    check(some(lambda a: isinstance(a.get("error"), dict)
               and a["error"].get("code") == "not_found"), "then 404")
    check(some(lambda a: a.get("deleted") is True), "webhook deleted")
    show = line_after("show: ")
    started_show = [a for a in answers if a.get("show_id") == show and a.get("status") == "started"]
    check(len(started_show) == 2, "the show: the helper's answer and GET, started")
    if started_show:
        show_stream = started_show[0].get("stream_id")
        check(all(a.get("stream_id") == show_stream for a in started_show), "one show stream")
        check(some(lambda a: a.get("stream_id") == show_stream and a.get("status") == "ended"),
              "the show's stream ended")
    check(some(lambda a: isinstance(a.get("clip_id"), str) and a.get("status") == "ready"
               and isinstance(a.get("url"), str)), "the clip, ready with its URL")
    download = line_after("clip: ") or ""
    check(download.startswith("200, "), f"the clip's download: {download!r}")
    if problems:
        print(out)
        for problem in problems:
            print(f"FAIL the Try-it block: {problem}", file=sys.stderr)
        return 1
    print(f"ok   the README's Try-it block: {len(answers)} answers as commented ({took:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

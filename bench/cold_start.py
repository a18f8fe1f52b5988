"""Cold start of every Lambda binary: from exec to its first answered invocation, through a
local Lambda Runtime API emulator, with configuration and AWS clients included. Each function
gets its sample event from events/; the store is DynamoDB served by moto (the table holds
events/seed.json). Each function gets the environment Lambda gives it: the variables the
template sets for it (the four that call LiveKit name its URL, key and the SSM parameter
holding the secret, which they read while they start serving; the others get none of it), the Lambda
variables, and one certificate bundle file as Amazon Linux has (not the directory of
certificates the benchmark machine's environment names, a variable Lambda does not set). A
Python handler doing the same set-up with boto3 is measured side by side, and so is the floor:
a Rust function that only answers (local-api/examples/hello_lambda.rs), on the same runtime
crate, async runtime and build profile.

Two figures per API function: "set-up", its sample request without the API key, answered 401
by the pipeline before any store request (the same work as the Python handler: start,
configuration, clients, one answer); and "first request", the sample request itself, which
adds the store round trips of a cold instance to moto.

The machine is noisy, so the figures are measured in rounds: each round starts every function
(set-up and first request), both Python handlers and the floor once, in an order shuffled
from round to round (a new seed on every run, BENCH_SEED to repeat one), and each figure is
the median over the rounds, with the range.

With BENCH_FUNCTION_CPU=N, every function and reference runs on CPU N alone, as in an
instance with one vCPU, and the emulator on the other CPUs: what a function does on a second
thread then competes with its own first answer. moto keeps every CPU: kept off the function's,
its answer to the secret's read (milliseconds of Python) would hold up the emulator's own
answer, a cost no Lambda instance has; on it, it takes from the function instead, which
counts against the function.

Usage: python3 bench/cold_start.py RUNS  (bench/cold_start.sh sets up moto and the binaries)
"""

import http.server
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
TARGET = os.environ["BENCH_TARGET"]
FLOOR = os.environ["BENCH_FLOOR"]
PYTHON = os.environ["BENCH_BOTO3_PYTHON"]

FUNCTION_CPU = os.environ.get("BENCH_FUNCTION_CPU")
# The rounds' orders come from this seed, new on every run unless BENCH_SEED repeats one: with
# one fixed seed every run would give each figure the same neighbours, and the same bias.
SEED = int(os.environ.get("BENCH_SEED", random.randrange(2**32)))


def spawn(command, **options):
    """Starts `command`, on the function CPU if one is named. The child takes the CPUs of the
    thread that starts it, so this thread moves there for the start and back: a `preexec_fn`
    would make every start a full fork of this process, and slower, and `taskset` an extra
    exec."""
    if FUNCTION_CPU is None:
        return subprocess.Popen(command, **options)
    own = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {int(FUNCTION_CPU)})
    try:
        return subprocess.Popen(command, **options)
    finally:
        os.sched_setaffinity(0, own)


# (binary, sample event, whether the template gives it LiveKit and the secret's parameter)
FUNCTIONS = [
    ("discovery-api", "discovery-root", False),
    ("streams-api", "streams-get", True),
    ("analytics-api", "analytics", False),
    ("webhooks-api", "webhooks-list", False),
    ("gateway-default", "gateway-default-not-found", True),
    ("livekit-webhook", "livekit-webhook", True),
    ("timers", "timers-preparing-timeout", True),
    ("outbox-relay", "outbox-relay-dynamodb-stream", False),
    ("delivery", "delivery-sqs-batch", False),
]
# What a Lambda instance's environment holds besides the function's own variables.
PASSED_THROUGH = ["PATH", "LANG", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
                  "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "STORE", "TABLE_NAME",
                  "DELIVERY_QUEUE_URL", "DELIVERY_DLQ_URL"]
CERTIFICATE_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


class Invocations:
    """What one emulator serves one process: its event, the invocations still to serve, and
    the answers. Each start gets its own, so that a call a killed process made late (a second
    `next` racing its kill) can never take the next process's invocation."""

    def __init__(self, event, remaining):
        self.event = event
        self.remaining = remaining
        self.answered = None
        self.count = 0
        self.lock = threading.Lock()
        # Set once the first answer came: the measuring thread sleeps on it instead of
        # polling, which would take CPU from the function being measured on a 2-core machine.
        self.done = threading.Event()


class Emulator(http.server.BaseHTTPRequestHandler):
    """The two Runtime API calls a function makes for one invocation."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        state = self.server.invocations
        if self.path.endswith("/runtime/invocation/next"):
            with state.lock:
                serve = state.remaining > 0
                state.remaining -= serve
            if not serve:
                # No more invocations for this process; it is killed while waiting.
                time.sleep(30)
                return
            self.send_response(200)
            self.send_header("Lambda-Runtime-Aws-Request-Id", "bench-request")
            self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 30000))
            self.send_header("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:bench")
            self.send_header("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(state.event)
        else:
            self.send_response(404)
            self.end_headers()

    def do_POST(self):
        state = self.server.invocations
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if "/response" in self.path or "/error" in self.path:
            with state.lock:
                state.count += 1
                if state.answered is None or "/error" in self.path:
                    state.answered = (time.perf_counter(), self.path, body)
            state.done.set()
        self.send_response(202)
        self.end_headers()


def serve(invocations):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Emulator)
    server.invocations = invocations
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop(server):
    server.shutdown()
    server.server_close()


def environment(port, livekit):
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.update({
        "SSL_CERT_FILE": CERTIFICATE_BUNDLE,
        "TZ": ":UTC",
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{port}",
        "AWS_LAMBDA_FUNCTION_NAME": "bench",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/bench",
        "AWS_LAMBDA_LOG_STREAM_NAME": "bench",
        "SCHEDULER_GROUP": "bench",
        "SCHEDULER_TARGET_ARN": "arn:aws:lambda:us-east-1:123456789012:function:timers",
        "SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/bench-scheduler",
        "SCHEDULER_DLQ_ARN": "arn:aws:sqs:us-east-1:123456789012:bench-timers-dlq",
        "TIMER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/bench-timers",
        "RECORDINGS_BUCKET": "bench-recordings",
        "RECORDING_DOWNLOAD_ROLE_ARN": "arn:aws:iam::123456789012:role/bench-recording-downloads",
        # Made by `admin create-table` beside the table.
        "SECRETS_KEY_ID": "alias/bench-secrets",
        "LOG_LEVEL": "warn",
    })
    if livekit:
        env.update({
            "LIVEKIT_URL": "http://127.0.0.1:9",
            "LIVEKIT_API_KEY": "APIsample",
            "LIVEKIT_API_SECRET_PARAMETER": os.environ["LIVEKIT_API_SECRET_PARAMETER"],
        })
    return env


SETUP_PHASES = ["configuration_ms", "sdk_config_ms", "clients_ms"]


def setup_phases(command, event_name, livekit):
    """Median of each phase of the function's `instance set up` log line over RUNS starts."""
    event = load_event(event_name, without_key=True)
    phases = {name: [] for name in SETUP_PHASES}
    for _ in range(RUNS):
        invocations = Invocations(event, 1)
        server = serve(invocations)
        env = environment(server.server_address[1], livekit)
        env["LOG_LEVEL"] = "info"
        process = spawn(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        invocations.done.wait(10)
        process.kill()
        stdout, _ = process.communicate()
        stop(server)
        for line in stdout.decode().splitlines():
            try:
                fields = json.loads(line).get("fields", {})
            except ValueError:
                continue
            if fields.get("message") == "instance set up":
                for name in SETUP_PHASES:
                    phases[name].append(fields[name])
    return {name: statistics.median(values) for name, values in phases.items() if values}


def peak_rss(command, event_name, livekit, invocations=300):
    """Peak resident memory (kB) of one process after serving many invocations."""
    with open(f"events/{event_name}.json", "rb") as f:
        state = Invocations(f.read(), invocations)
    server = serve(state)
    process = spawn(command, env=environment(server.server_address[1], livekit),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.perf_counter()
    while state.count < invocations and time.perf_counter() - start < 60:
        time.sleep(0.005)
    with open(f"/proc/{process.pid}/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    process.kill()
    process.communicate()
    stop(server)
    return peak, state.count


def load_event(event_name, without_key=False):
    with open(f"events/{event_name}.json", "rb") as f:
        raw = f.read()
    if not without_key:
        return raw
    event = json.loads(raw)
    event["headers"].pop("authorization", None)
    return json.dumps(event).encode()


def is_api_event(event_name):
    return "authorization" in json.loads(load_event(event_name)).get("headers", {})


def sample(command, event_name, livekit, without_key=False):
    """One start of `command`: ms from exec to its first answer."""
    invocations = Invocations(load_event(event_name, without_key), 1)
    server = serve(invocations)
    start = time.perf_counter()
    process = spawn(command, env=environment(server.server_address[1], livekit),
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    invocations.done.wait(10)
    answered = invocations.answered
    process.kill()
    _, stderr = process.communicate()
    stop(server)
    if answered is None or "/error" in answered[1]:
        raise SystemExit(f"{command[-1]}: no answer ({answered}); stderr: {stderr.decode()[-500:]}")
    return (answered[0] - start) * 1000


def main():
    if FUNCTION_CPU is not None:
        os.sched_setaffinity(0, os.sched_getaffinity(0) - {int(FUNCTION_CPU)})
    # Every figure is measured once per round, rounds interleaved, so that the machine's load
    # weighs on the functions and the references alike.
    handler = [PYTHON, "bench/python_handler.py"]
    cases = {}
    for binary, event, livekit in FUNCTIONS:
        command = [f"{TARGET}/{binary}"]
        if is_api_event(event):
            cases[(binary, "setup")] = (command, event, livekit, True)
        cases[(binary, "first")] = (command, event, livekit, False)
    cases[("python", "no")] = (handler, "discovery-root", False, False)
    cases[("python", "yes")] = (handler, "discovery-root", True, False)
    cases[("floor", "")] = ([FLOOR], "discovery-root", False, False)
    samples = {case: [] for case in cases}
    for round_number in range(RUNS):
        # In a different order each round, so that no figure always follows the same one
        # (a Python handler's exit, say).
        order = list(cases.items())
        random.Random(SEED * RUNS + round_number).shuffle(order)
        for case, arguments in order:
            samples[case].append(sample(*arguments))
    figures = {case: (statistics.median(values), min(values), max(values))
               for case, values in samples.items()}
    rows = []
    for binary, event, livekit in FUNCTIONS:
        first = figures[(binary, "first")]
        setup = figures.get((binary, "setup"), first)
        rss, served = peak_rss([f"{TARGET}/{binary}"], event, livekit)
        rows.append((binary, event, livekit, setup, first, rss, served))
    python, python_with_secret = figures[("python", "no")], figures[("python", "yes")]
    floor = figures[("floor", "")]
    print(f"orders from BENCH_SEED={SEED}\n")
    print("| function | event | reads the secret | set-up median ms (min-max) "
          "| first request median ms (min-max) | peak RSS after N invocations |")
    print("|---|---|---|---|---|---|")
    span = lambda m: f"{m[0]:.1f} ({m[1]:.1f}-{m[2]:.1f})"
    said = lambda livekit: "yes" if livekit else "no"
    for binary, event, livekit, setup, first, rss, served in rows:
        print(f"| {binary} | {event} | {said(livekit)} | {span(setup)} | {span(first)} "
              f"| {rss / 1024:.1f} MB ({served}) |")
    print(f"| python boto3 handler | discovery-root | no | {span(python)} | | |")
    print(f"| python boto3 handler | discovery-root | yes | {span(python_with_secret)} | | |")
    print(f"| Rust hello-world (the floor) | discovery-root | no | {span(floor)} | | |")
    print(f"\nPython / Rust (discovery, same set-up): {python[0] / rows[0][3][0]:.1f}x")
    streams = next(r for r in rows if r[0] == "streams-api")
    print(f"Python / Rust (with the secret, against streams-api's set-up): "
          f"{python_with_secret[0] / streams[3][0]:.1f}x")
    for binary, _, _, setup, *_ in rows:
        print(f"{binary} set-up / floor: {setup[0] / floor[0]:.2f}x")
    for binary, event, livekit in [("discovery-api", "discovery-root", False),
                                   ("streams-api", "streams-get", True)]:
        phases = setup_phases([f"{TARGET}/{binary}"], event, livekit)
        print(f"\n{binary} set-up phases, medians (ms): "
              + ", ".join(f"{name} {value:.2f}" for name, value in phases.items()))
    print(f"slowest Rust set-up median: {max(r[3][0] for r in rows):.1f} ms")
    print(f"slowest Rust first-request median: {max(r[4][0] for r in rows):.1f} ms")


if __name__ == "__main__":
    main()

"""Perf over exactly a window of pushes: what bench/counts and bench/profile share.

apns-mock is warmed up, then perf starts with its events off and turns them on and off through its control FIFO,
acknowledging each, so exactly the pushes' window is recorded (waiting for perf to attach instead recorded a varying
share of them).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench import HEADERS, ApnsMock, HarnessError, make_payload, parse_h2load, provider_token

# What both tools run unless flags follow `--`: one event loop (unless asked for serve's default), no
# authentication (the bench's plain workload), or with --token the bench's token workload (every request carries
# the same provider token).
ONE_LOOP = ["--threads", "1"]


def add_load_arguments(parser) -> None:
    """`--token` and the serve flags after `--`, which `load` reads: the same in bench/counts and bench/profile."""
    parser.add_argument("--token", action="store_true",
                        help="the token workload: --auth token, every push carrying the provider token of `apns-mock token`")
    parser.add_argument("serve_args", nargs="*", help="apns-mock flags after --, instead of --threads 1 --auth none (--token: --auth token)")


def load(binary: str, token: bool, serve_args: list[str], one_loop: bool = True) -> tuple[list[str], list[str]]:
    """The serve flags and the pushes' extra headers: the plain load, or with `token` the bench's token workload
    (`authorization: bearer <JWT>` from `apns-mock token`); `--threads 1` unless `one_loop` is off (serve's default
    loops). Flags given after `--` replace the defaults."""
    defaults = (ONE_LOOP if one_loop else []) + ["--auth", "token" if token else "none"]
    if not token:
        return serve_args or defaults, []
    jwt, why = provider_token(binary)
    if jwt is None:
        raise HarnessError(f"no provider token for --token: {why}")
    return serve_args or defaults, [f"authorization: bearer {jwt}"]


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def script_samples(data: Path, fields: str, call_graph: bool = True) -> list[list[str]]:
    """`perf script`'s samples in `data`, each as its non-empty lines, stripped: with call chains a sample is a block
    of lines (the fields before the chain, then a frame per line), without one a single line. bench/counts and
    bench/profile read their own fields out of these."""
    script = run(["perf", "script", "-i", str(data), "-F", fields])
    if script.returncode != 0:
        raise HarnessError(f"perf script failed: {script.stderr.strip()[-300:]}")
    chunks = script.stdout.split("\n\n") if call_graph else script.stdout.splitlines()
    return [lines for chunk in chunks if (lines := [line.strip() for line in chunk.split("\n") if line.strip()])]


def missing_prerequisite(tool_name: str, binary: str, tools: tuple[str, ...]) -> str | None:
    """Why `tool_name` cannot run here (a tool not installed, no apns-mock build), or None."""
    for tool in tools:
        if not shutil.which(tool):
            return f"{tool_name}: {tool} is not installed (bench/run installs h2load; perf is linux-perf)"
    if not os.access(binary, os.X_OK):
        return f"{tool_name}: no apns-mock at {binary} (swift build -c release --product apns-mock)"
    return None


@contextlib.contextmanager
def serving(binary: str, serve_args: list[str], max_recorded: int, prefix: str) -> Iterator[tuple[ApnsMock, Path, Path]]:
    """The bench's own apns-mock (its flags, port 0, a log in a temporary work folder; threads from the flags) and
    the bench's 200-byte push: yields the server, the push's file and the work folder; stops the server on exit."""
    with tempfile.TemporaryDirectory(prefix=prefix) as directory:
        workdir = Path(directory)
        body = workdir / "payload.json"
        body.write_bytes(make_payload(200))
        server = ApnsMock(workdir, None, os.path.abspath(binary), 0, max_recorded, serve_args)
        try:
            server.start()
            yield server, body, workdir
        finally:
            server.stop()


def push(server: ApnsMock, body: Path, count: int, headers: list[str]) -> None:
    """`count` pushes over 4 connections with 100 streams each, as the bench's throughput workload sends them,
    with `headers` beside the bench's own."""
    command = ["h2load", "-n", str(count), "-c", "4", "-m", "100", "-t", "1", "-d", str(body)]
    for header in HEADERS + headers:
        command += ["-H", header]
    result = run(command + [server.url()], timeout=300)
    if result.returncode != 0 or parse_h2load(result.stdout).get("status", {}).get("2xx") != count:
        raise HarnessError(f"h2load did not get {count} answers with status 2xx: {result.stdout[-600:]}{result.stderr[-300:]}")


def record(server: ApnsMock, events: list[str], body: Path, pushes: int, call_graph: bool, workdir: Path,
           extra: list[str] | None = None, headers: list[str] | None = None) -> Path:
    """Records `events` in apns-mock while `pushes` pushes are answered, after a warm-up; `extra` are more
    `perf record` flags (a sampling frequency), `headers` the pushes' extra headers (see `load`)."""
    headers = headers or []
    push(server, body, 2000, headers)
    data = workdir / "perf.data"
    control, acknowledgement = workdir / "perf-control", workdir / "perf-ack"
    os.mkfifo(control)
    os.mkfifo(acknowledgement)
    command = ["perf", "record", "-q", "-D", "-1", f"--control=fifo:{control},{acknowledgement}",
               "-o", str(data), "-p", str(server.proc.pid)]
    for event in events:
        command += ["-e", event]
    if call_graph:
        command.append("-g")
    command += extra or []
    recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ack = os.open(acknowledgement, os.O_RDONLY | os.O_NONBLOCK)
    ctl = None
    try:
        ctl = open_writer(control, recorder)
        perf_command(ctl, ack, "enable", recorder)
        push(server, body, pushes, headers)
        perf_command(ctl, ack, "disable", recorder)
    finally:
        for descriptor in (ctl, ack):
            if descriptor is not None:
                os.close(descriptor)
        recorder.send_signal(signal.SIGINT)
        try:
            recorder.wait(timeout=120)
        except subprocess.TimeoutExpired:
            recorder.kill()
    if recorder.returncode not in (0, -signal.SIGINT):
        raise HarnessError(f"perf record failed: {recorder.stderr.read().decode()[-300:]}")
    return data


def open_writer(fifo: Path, recorder: subprocess.Popen) -> int:
    """Opens the control FIFO once perf has opened its end (within 30 s)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            if recorder.poll() is not None or time.monotonic() > deadline:
                raise HarnessError(f"perf record did not start: {recorder.stderr.read().decode()[-300:]}")
            time.sleep(0.02)


def perf_command(ctl: int, ack: int, command: str, recorder: subprocess.Popen) -> None:
    """Sends perf a control command and waits for its acknowledgement (within 30 s)."""
    os.write(ctl, (command + "\n").encode())
    deadline = time.monotonic() + 30
    reply = b""
    while b"ack" not in reply:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or recorder.poll() is not None:
            raise HarnessError(f"perf did not acknowledge '{command}'")
        ready, _, _ = select.select([ack], [], [], remaining)
        if ready:
            reply += os.read(ack, 64)


def demangled(names: list[str]) -> dict[str, str]:
    text = run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(names)).stdout.split("\n")
    return dict(zip(names, text)) if len(text) >= len(names) else {name: name for name in names}

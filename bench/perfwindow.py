"""Perf over exactly a window of pushes: what bench/counts and bench/profile share.

apns-mock is warmed up, then perf starts with its events off and turns them on and off through its control FIFO,
acknowledging each, so exactly the pushes' window is recorded (waiting for perf to attach instead recorded a varying
share of them).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

from bench import HEADERS, ApnsMock, HarnessError, parse_h2load


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def push(server: ApnsMock, body: Path, count: int) -> None:
    """`count` pushes over 4 connections with 100 streams each, as the bench's throughput workload sends them."""
    command = ["h2load", "-n", str(count), "-c", "4", "-m", "100", "-t", "1", "-d", str(body)]
    for header in HEADERS:
        command += ["-H", header]
    result = run(command + [server.url()], timeout=300)
    if result.returncode != 0 or parse_h2load(result.stdout).get("status", {}).get("2xx") != count:
        raise HarnessError(f"h2load did not get {count} answers with status 2xx: {result.stdout[-600:]}{result.stderr[-300:]}")


def record(server: ApnsMock, events: list[str], body: Path, pushes: int, call_graph: bool, workdir: Path,
           extra: list[str] | None = None) -> Path:
    """Records `events` in apns-mock while `pushes` pushes are answered, after a warm-up; `extra` are more
    `perf record` flags (a sampling frequency)."""
    push(server, body, 2000)
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
        push(server, body, pushes)
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

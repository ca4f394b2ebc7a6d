#!/usr/bin/env python3
"""Benchmarks apns-mock against nginx and nghttpd with h2load (Python 3 standard library only).

Called by `bench/run`, which installs the tools and builds apns-mock first; see bench/README.md.
Every server this script starts runs in its own process group on 127.0.0.1 and is killed when the script
exits (normally, on an exception, on SIGINT/SIGTERM, and through PR_SET_PDEATHSIG if the script is killed hard).
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
CERTS = ROOT / "Certs"
SIMULATED_DEVICES = 10_000
DEVICE_TOKEN = "5f3c2a9e8b7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615243b"
TOPIC = "com.example.app"
# The broadcast workload's channel (base64 of "apns-mock-bench!").
BROADCAST_CHANNEL = "YXBucy1tb2NrLWJlbmNoIQ=="
HEADERS = [f"apns-topic: {TOPIC}", "apns-push-type: alert"]
CLK_TCK = os.sysconf("SC_CLK_TCK")
LOOPBACK = "127.0.0.1"


# --------------------------------------------------------------------------------------------------------------
# Small helpers

# The second apns-mock row: `--threads 1`, like the references' single worker.
ONE_THREAD = "apns-mock-1t"
# apns-mock with the run's default flags, beside apns-mock in a variant workload (record file, stores, stalled feed,
# token): the variant's share of plain throughput is then paired by round, as the references' ratios are.
PLAIN = "apns-mock-plain"
# nghttpd sent the plain load beside nghttpd sent a variant's extra headers (the token workload's authorization):
# what those header bytes cost the transport alone. libnghttp2's HPACK encoder, which h2load uses (as do curl and
# Node), never indexes `authorization`, so every request carries the whole JWT and every server decodes it.
NGHTTPD_PLAIN = "nghttpd-plain"
# nghttpd with as many workers as apns-mock's default has event loops, in the throughput workload beside the
# one-worker nghttpd the targets use: whether the default's loss against one worker is apns-mock's or the thread
# count's on this machine (libnghttp2's own server, given a second thread beside h2load on two cores, loses too).
NGHTTPD_CORES = "nghttpd-cores"


def is_apns_mock(name: str) -> bool:
    return name in ("apns-mock", ONE_THREAD, PLAIN)


# The builds `bench/run --floor` makes from bench/floor/*.patch, each cutting the request path shorter: their
# differences are what the decision and the recording cost (see floor_breakdown).
TRANSPORT_ONLY = "transport-only"
NO_RECORDING = "no-recording"
# The same builds with serve's default event loops, beside the apns-mock row: whether the default's extra CPU per
# push comes with the transport or with apns-mock's own work.
DEFAULT_LOOPS = "@d"


def is_measured(row: dict) -> bool:
    """apns-mock or another build of it (`--variant`): the rows that get ratios to the references."""
    return is_apns_mock(row["server"]) or bool(row.get("variant"))



def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


class HarnessError(Exception):
    """The harness itself broke (a server did not start, h2load failed, the recorder disagrees)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def port_open(port: int) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=0.5):
            return True
    except OSError:
        return False


def stalled_reader(admin_port: int) -> socket.socket:
    """Opens apns-mock's live feed and never reads it (a small receive buffer, so it stalls at once)."""
    reader = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.connect((LOOPBACK, admin_port))
    reader.sendall(b"GET /admin/notifications/stream HTTP/1.1\r\nHost: bench\r\n\r\n")
    return reader


def _die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when this script dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def percentile(sorted_values: list[int], fraction: float) -> float | None:
    """Nearest-rank percentile of already sorted values."""
    if not sorted_values:
        return None
    rank = max(1, int(-(-fraction * len(sorted_values) // 1)))  # ceil
    return float(sorted_values[min(rank, len(sorted_values)) - 1])


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def read_proc_status(pid: int) -> dict[str, int]:
    result = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmHWM:", "VmRSS:")):
                    key, value = line.split(":", 1)
                    result[key] = int(value.split()[0])  # kB
    except OSError:
        pass
    return result


def cpu_ticks(pid: int) -> int:
    """utime + stime of one process, in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return 0
    fields = data[data.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5), counted after "pid (comm)"


def descendants(root: int) -> list[int]:
    """root and every process below it (nginx: master and worker)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                data = f.read()
        except OSError:
            continue
        ppid = int(data[data.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


# --------------------------------------------------------------------------------------------------------------
# Servers


def note_process_group(pgid: int) -> None:
    """bench/run's trap kills these groups too, in case this script itself is killed with SIGKILL."""
    path = os.environ.get("BENCH_PGID_FILE")
    if path:
        with open(path, "a") as f:
            f.write(f"{pgid}\n")

STARTED: list["Server"] = []


def fresh_postgres_database(address: str, name: str) -> str:
    """`postgres://USER@HOST:PORT/DB` made into a new, empty database `DB_<row name>` (dropped first)."""
    base, _, database = address.rpartition("/")
    fresh = re.sub(r"[^a-z0-9_]", "_", f"{database}_{name}".lower())
    host_part = base.split("//", 1)[1]
    user, _, host_port = host_part.rpartition("@")
    host, _, port = host_port.partition(":")
    for sql in (f"DROP DATABASE IF EXISTS {fresh}", f"CREATE DATABASE {fresh}"):
        subprocess.run(["psql", "-h", host, "-p", port or "5432", "-U", user.split(":")[0], "-d", database, "-qAtc", sql],
                       check=True, capture_output=True, env={**os.environ, "PGPASSWORD": user.partition(":")[2]})
    return f"{base}/{fresh}"


class LocalPostgres:
    """A PostgreSQL server of the bench's own when no --postgres is given: Debian's binaries, initdb in the work
    folder, a free port, durability off (the bench measures the mock's writer, not the disk)."""

    def __init__(self, workdir: Path):
        roots = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
        if not roots:
            raise HarnessError("PostgreSQL is not installed (Debian: apt-get install postgresql), and no --postgres was given")
        self.bin = roots[0].parent
        self.folder = workdir / "postgres"
        self.folder.mkdir()
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_postgres:
            shutil.chown(self.folder, "postgres")
            os.chmod(workdir, 0o711)  # the server, running as postgres, must reach its folder
        subprocess.run(self.as_postgres + [str(self.bin / "initdb"), "-D", str(self.folder / "data"), "-U", "postgres",
                                           "-A", "trust", "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
        self.port = free_port()
        self.process = subprocess.Popen(
            self.as_postgres + [str(self.bin / "postgres"), "-D", str(self.folder / "data"), "-p", str(self.port),
                                "-k", str(self.folder), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                                "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 60
        while subprocess.run([str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                             capture_output=True).returncode != 0:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise HarnessError("the bench's PostgreSQL did not start")
            time.sleep(0.1)
        self.address = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self):
        subprocess.run(self.as_postgres + [str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "stop"],
                       capture_output=True)
        self.process.wait(timeout=30)


class Server:
    name = "server"

    def __init__(self, workdir: Path, pin: str | None):
        self.workdir = workdir
        self.pin = pin
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.log_path = workdir / f"{self.name}.log"

    # Subclasses: command() and wait_ready().
    def command(self) -> list[str]:
        raise NotImplementedError

    def url(self) -> str:
        return f"https://{LOOPBACK}:{self.port}/3/device/{DEVICE_TOKEN}"

    def start(self) -> None:
        last_error = None
        for _attempt in range(3):  # a free port can be taken between probing and binding
            self.port = free_port()
            cmd = self.command()
            if self.pin:
                cmd = ["taskset", "-c", self.pin] + cmd
            log_file = open(self.log_path, "ab")
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
            log_file.close()
            STARTED.append(self)
            note_process_group(self.proc.pid)
            try:
                self.wait_ready(deadline=time.monotonic() + 30)
                return
            except HarnessError as error:
                last_error = error
                self.stop()
        raise HarnessError(f"{self.name} did not start: {last_error}\n--- {self.log_path} ---\n{self.log_tail()}")

    def wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f"{self.name} exited with status {self.proc.returncode}")
            if port_open(self.port):
                return
            time.sleep(0.05)
        raise HarnessError(f"{self.name} is not listening on port {self.port} after 30 s")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if self in STARTED:
            STARTED.remove(self)
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # our own process group (start_new_session)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=5)
        # A worker that outlived its master (should not happen) still carries our process group id.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def pids(self) -> list[int]:
        return descendants(self.proc.pid) if self.proc else []

    def cpu_seconds(self) -> float:
        return sum(cpu_ticks(pid) for pid in self.pids()) / CLK_TCK

    def memory_kb(self) -> dict[str, int]:
        """VmRSS and VmHWM summed over the process tree (nginx: master + worker)."""
        total = {"VmRSS": 0, "VmHWM": 0}
        for pid in self.pids():
            for key, value in read_proc_status(pid).items():
                total[key] += value
        return total

    # Only apns-mock records; the references have nothing to check or clear.
    def clear(self) -> None:
        pass


class ApnsMock(Server):
    name = "apns-mock"

    def __init__(self, workdir, pin, binary: str, threads: int, max_recorded: int, extra_args: list[str],
                 name: str = "apns-mock", checks_recordings: bool = True):
        # `threads` 0: serve's default (one event loop per core the process may use), what users run.
        # `checks_recordings` False: a `--variant` build, which may record nothing (bench/floor's patches).
        self.name = name
        self.checks_recordings = checks_recordings
        super().__init__(workdir, pin)
        self.binary = binary
        self.threads = threads
        self.max_recorded = max_recorded
        # Each apns-mock row writes its own record file and its own database (a fresh one).
        self.record_file = None
        extra_args = list(extra_args)
        if "--record-file" in extra_args:
            index = extra_args.index("--record-file") + 1
            extra_args[index] = self.record_file = f"{extra_args[index]}-{name}"
        if "--store" in extra_args and extra_args[extra_args.index("--store") + 1].startswith("sqlite:"):
            index = extra_args.index("--store") + 1
            path = f"{extra_args[index][len('sqlite:'):]}-{name}"
            for suffix in ("", "-wal", "-shm"):
                Path(path + suffix).unlink(missing_ok=True)
            extra_args[index] = "sqlite:" + path
        if "--store" in extra_args and extra_args[extra_args.index("--store") + 1].startswith("postgres"):
            index = extra_args.index("--store") + 1
            extra_args[index] = fresh_postgres_database(extra_args[index], name)
        self.extra_args = extra_args
        self.admin_port = 0

    def command(self):
        # Port 0 for both: the listening line tells which ports the kernel picked.
        return [
            self.binary,
            "--host", LOOPBACK, "--port", "0",
            "--admin-host", LOOPBACK, "--admin-port", "0", "--channels-port", "0",
        ] + (["--threads", str(self.threads)] if self.threads else []) + [
            "--max-recorded", str(self.max_recorded),
            "--certs-dir", str(CERTS),
        ] + self.extra_args

    def wait_ready(self, deadline):
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f"apns-mock exited with status {self.proc.returncode}")
            text = self.log_path.read_text(errors="replace")[offset:] if self.log_path.exists() else ""
            provider = re.search(r"provider=https://[^\s:]+:(\d+)", text)
            admin = re.search(r"admin=http://[^\s:]+:(\d+)", text)
            if provider and admin:
                self.port, self.admin_port = int(provider.group(1)), int(admin.group(1))
                self.stats()  # the admin API answers
                return
            time.sleep(0.05)
        raise HarnessError("apns-mock did not log 'apns-mock listening … provider=… admin=…' within 30 s")

    def start(self):
        # apns-mock binds port 0 itself: one attempt, no port race.
        self.port = 0
        cmd = self.command()
        if self.pin:
            cmd = ["taskset", "-c", self.pin] + cmd
        log_file = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, cwd=self.workdir,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
        log_file.close()
        STARTED.append(self)
        note_process_group(self.proc.pid)
        try:
            self.wait_ready(deadline=time.monotonic() + 30)
        except HarnessError as error:
            self.stop()
            raise HarnessError(f"apns-mock did not start: {error}\n--- {self.log_path} ---\n{self.log_tail()}")

    def admin(self, method: str, path: str) -> dict:
        request = urllib.request.Request(f"http://{LOOPBACK}:{self.admin_port}{path}", method=method)
        with urllib.request.urlopen(request, timeout=15) as response:
            return json.loads(response.read() or b"{}")

    def stats(self) -> dict:
        return self.admin("GET", "/admin/stats")

    def clear(self):
        self.admin("DELETE", "/admin/notifications")
        stored = self.stats()["recorder"]["stored"]
        if stored != 0:
            raise HarnessError(f"DELETE /admin/notifications left {stored} recordings")

    def wait_recorded(self, expected: int, timeout: float = 10.0) -> dict:
        """The recorder may be fed asynchronously: wait until it holds `expected`, or give up and return."""
        deadline = time.monotonic() + timeout
        while True:
            stats = self.stats()
            if stats["recorder"]["stored"] == expected or time.monotonic() > deadline:
                return stats
            time.sleep(0.05)


class Nginx(Server):
    name = "nginx"

    def command(self):
        prefix = self.workdir / "nginx"
        prefix.mkdir(exist_ok=True)
        # As root, nginx would switch its worker to `nobody`; keep it as the invoking user so the temporary
        # files inside the prefix stay writable. As non-root, the `user` directive is ignored with a warning,
        # so it is left out.
        user_line = "user root;" if os.geteuid() == 0 else "# (not root: workers run as the invoking user)"
        text = (BENCH_DIR / "nginx.conf.template").read_text()
        for key, value in {
            "@USER_LINE@": user_line,
            "@PREFIX@": str(prefix),
            "@PORT@": str(self.port),
            "@CERT@": str(CERTS / "server.pem"),
            "@KEY@": str(CERTS / "server-key.pem"),
        }.items():
            text = text.replace(key, value)
        conf = prefix / "nginx.conf"
        conf.write_text(text)
        return ["nginx", "-p", f"{prefix}/", "-c", str(conf), "-e", str(prefix / "error.log")]

    def log_tail(self, lines=30):
        tail = super().log_tail(lines)
        error_log = self.workdir / "nginx" / "error.log"
        if error_log.exists():
            tail += "\n--- error.log ---\n" + "\n".join(error_log.read_text(errors="replace").splitlines()[-lines:])
        return tail


class Nghttpd(Server):
    name = "nghttpd"
    # One worker, as nginx's one: the references' configuration (CoresNghttpd runs more).
    workers = 1

    def command(self):
        # nghttpd serves files: an empty file at the request path. A POST to a static file is answered 200
        # with the (empty) file and the uploaded body is read and dropped (checked with nghttp2 1.52).
        docroot = self.workdir / "nghttpd-htdocs"
        (docroot / "3" / "device").mkdir(parents=True, exist_ok=True)
        (docroot / "3" / "device" / DEVICE_TOKEN).touch()
        (docroot / "4" / "broadcasts" / "apps").mkdir(parents=True, exist_ok=True)
        (docroot / "4" / "broadcasts" / "apps" / TOPIC).touch()
        return [
            "nghttpd", f"--workers={self.workers}", f"--address={LOOPBACK}", f"--htdocs={docroot}",
            str(self.port), str(CERTS / "server-key.pem"), str(CERTS / "server.pem"),
        ]


class CoresNghttpd(Nghttpd):
    """nghttpd with `workers` worker threads (NGHTTPD_CORES); nghttpd hands each accepted connection to the next."""
    name = NGHTTPD_CORES

    def __init__(self, workdir: Path, pin: str | None, workers: int):
        super().__init__(workdir, pin)
        self.workers = workers


class PlainNghttpd(Nghttpd):
    """nghttpd in a variant workload, sent the plain load without the variant's extra headers (NGHTTPD_PLAIN)."""
    name = NGHTTPD_PLAIN


def cleanup_servers() -> None:
    for server in list(STARTED):
        try:
            server.stop()
        except Exception as error:  # keep stopping the others
            log(f"stopping {server.name}: {error}")


# --------------------------------------------------------------------------------------------------------------
# h2load

UNIT_US = {"us": 1.0, "ms": 1000.0, "s": 1_000_000.0}


def parse_duration_us(text: str) -> float | None:
    match = re.fullmatch(r"([\d.]+)(us|ms|s)", text.strip())
    return float(match.group(1)) * UNIT_US[match.group(2)] if match else None


def parse_h2load(output: str) -> dict:
    result: dict = {}
    if m := re.search(r"finished in ([\d.]+)(us|ms|s), ([\d.]+) req/s", output):
        result["seconds"] = float(m.group(1)) * UNIT_US[m.group(2)] / 1e6
        result["req_per_s"] = float(m.group(3))
    if m := re.search(
        r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout",
        output,
    ):
        for key, value in zip(["total", "started", "done", "succeeded", "failed", "errored", "timeout"], m.groups()):
            result[key] = int(value)
    if m := re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", output):
        result["status"] = dict(zip(["2xx", "3xx", "4xx", "5xx"], map(int, m.groups())))
    if m := re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", output):
        result["time_for_request_us"] = dict(zip(["min", "max", "mean", "sd"], map(parse_duration_us, m.groups())))
    return result


@dataclass
class Workload:
    key: str
    label: str
    clients: int
    streams: int
    requests: int
    extra_headers: list[str] = field(default_factory=list)
    # apns-mock flags for this workload instead of the run's defaults (the token variant turns auth on).
    apns_mock_args: list[str] | None = None
    # Token connections are stream-gated, as on APNs: SETTINGS_MAX_CONCURRENT_STREAMS is 1 until the first token
    # is verified. h2load opens its -m streams before the server's SETTINGS arrive, so apns-mock may refuse up
    # to m-1 of them per connection with RST_STREAM(REFUSED_STREAM), and h2load does not retry them.
    stream_gated: bool = False
    # Another path than the device push's (the broadcast workload), and whether the device push's headers go too.
    path: str | None = None
    push_headers: bool = True
    # A live-feed reader that connects to apns-mock's /admin/notifications/stream and never reads: the cost of a
    # stalled inspector tab (its queue fills, then lets its oldest go).
    stalled_reader: bool = False
    # A variant of the plain load (a sink, a stalled reader, token auth) whose cost is the point: apns-mock with the
    # run's default flags (PLAIN) runs in the same rounds, so the share is measured seconds apart, not minutes.
    paired_plain: bool = False
    # Pushes spread over this many device tokens (h2load's -i, in turn) instead of one: the simulated-devices
    # workload's tokens, sent alike to its plain twin so that the registered devices are the only difference.
    device_tokens: int = 0
    # A workload whose requests go one at a time measures latency in every round (logging one line per request
    # costs h2load about 1 us, nothing next to a round trip). The others measure throughput with h2load's
    # per-request log off, since h2load is then the limit and that log (one write(2) per request) cut what it
    # could send by a fifth; their latency comes from one more round, logged.
    @property
    def latency_bound(self) -> bool:
        return self.clients * self.streams == 1

    @property
    def refusals_allowed(self) -> int:
        return self.clients * (self.streams - 1) if self.stream_gated else 0

    @property
    def shape(self) -> str:
        return f"-c {self.clients} -m {self.streams}"


# The simulated-devices workload's mix (issue 50): of every ten registered devices, seven online, one offline (its
# newest push stored), one in low power (priority 5 held back), one with notifications off. None has its app
# removed: every push is accepted, as the harness requires, and a 410 costs less than a judged push.
SIMULATED_STATES = ["online"] * 7 + ["offline", "lowPower", "notificationsDisabled"]


def simulated_tokens(count: int) -> list[str]:
    return [f"{index + 1:064x}" for index in range(count)]


def register_simulated_devices(admin_port: int, count: int) -> None:
    """Registers `count` devices of TOPIC in SIMULATED_STATES' mix through the admin API, on one connection (a
    scenario file of 10,000 devices is past the scenario size limit, 1 MiB)."""
    import http.client
    connection = http.client.HTTPConnection(LOOPBACK, admin_port, timeout=30)
    try:
        for index, token in enumerate(simulated_tokens(count)):
            body = json.dumps({"token": token, "topic": TOPIC, "state": SIMULATED_STATES[index % len(SIMULATED_STATES)]})
            connection.request("POST", "/admin/devices", body=body, headers={"Content-Type": "application/json"})
            answer = connection.getresponse()
            text = answer.read()
            if answer.status != 201:
                raise RuntimeError(f"registering simulated device {index + 1}: {answer.status} {text[:200]!r}")
    finally:
        connection.close()


def run_h2load(args, server: Server, workload: Workload, body: Path, workdir: Path, requests: int | None = None,
               keep_log: bool = True) -> dict:
    requests = requests or workload.requests
    log_file = workdir / "h2load-latency.log"
    if log_file.exists():
        log_file.unlink()
    cmd = [
        "h2load", "-n", str(requests), "-c", str(workload.clients), "-m", str(workload.streams), "-t", "1",
        "-d", str(body),
    ]
    # The plain twin of a variant (Workload.paired_plain) sends what the plain load sends: the token variant's
    # twin is apns-mock with --auth none and no authorization header, the comparison its issue asks for.
    # nghttpd's twin (NGHTTPD_PLAIN) likewise sends no extra header, beside nghttpd that does.
    extra_headers = [] if server.name in (PLAIN, NGHTTPD_PLAIN) else workload.extra_headers
    for header in (HEADERS if workload.push_headers else []) + extra_headers:
        cmd += ["-H", header]
    if keep_log:
        cmd += ["--log-file", str(log_file)]
    url = server.url()
    if workload.path:
        url = url[:url.index("/3/device/")] + workload.path
    if workload.device_tokens:
        uris = workdir / f"h2load-uris-{server.port}.txt"
        base = url[:url.index("/3/device/")]
        uris.write_text("".join(f"{base}/3/device/{token}\n" for token in simulated_tokens(workload.device_tokens)))
        cmd += ["-i", str(uris)]
    else:
        cmd.append(url)
    if args.pin:
        cmd = ["taskset", "-c", args.client_cpu] + cmd
    # Bounded: generous for the slowest server we have seen (about 5k req/s at -c 1 -m 1 on a busy machine).
    timeout = 60 + requests / 2000
    try:
        completed = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise HarnessError(f"h2load against {server.name} ({workload.shape}, -n {requests}) did not finish in {timeout:.0f} s")
    result = parse_h2load(completed.stdout)
    if "done" not in result or "req_per_s" not in result:
        raise HarnessError(
            f"h2load against {server.name} printed no result (exit {completed.returncode}):\n"
            f"{completed.stdout[-2000:]}\n{completed.stderr[-2000:]}"
        )
    result["requested"] = requests
    stderr_lines = [line for line in completed.stderr.splitlines() if line.strip()]
    if stderr_lines:
        result["h2load_stderr"] = " | ".join(stderr_lines[-5:])
    if keep_log and log_file.exists():
        latencies, statuses = [], {}
        with open(log_file) as f:
            for line in f:
                parts = line.split("\t")
                if len(parts) >= 3:
                    statuses[parts[1]] = statuses.get(parts[1], 0) + 1
                    if parts[1] != "-1":  # -1: no response (stream reset or connection lost)
                        latencies.append(int(parts[2]))
        latencies.sort()
        result["p50_us"] = percentile(latencies, 0.50)
        result["p90_us"] = percentile(latencies, 0.90)
        result["p99_us"] = percentile(latencies, 0.99)
        result["p999_us"] = percentile(latencies, 0.999)
        result["status_codes"] = statuses  # exact codes from the log (h2load's summary only has classes)
        log_file.unlink()
    return result


# --------------------------------------------------------------------------------------------------------------
# The benchmark proper


class Bench:
    def __init__(self, args):
        self.args = args
        # `--variant NAME=BINARY[@THREADS]`: another build of apns-mock beside the others, with `--threads 1` or
        # THREADS (`default`: serve's own count, as the apns-mock row). Checked first, so a mistake leaves nothing
        # behind.
        self.variants: dict[str, tuple[str, int]] = {}
        for spec in args.variant:
            name, _, binary = spec.partition("=")
            threads = 1
            head, at, tail = binary.rpartition("@")
            if at and (tail.isdigit() or tail == "default"):
                binary, threads = head, 0 if tail == "default" else int(tail)
            if not name or not binary or is_apns_mock(name) or name in ("nginx", "nghttpd") or name in self.variants:
                raise HarnessError(f"--variant {spec!r}: expected NAME=BINARY[@THREADS] with a NAME of its own")
            if not os.access(binary, os.X_OK):
                raise HarnessError(f"--variant {spec!r}: {binary} is not an executable")
            self.variants[name] = (os.path.abspath(binary), threads)
        self.workdir = Path(tempfile.mkdtemp(prefix="apns-mock-bench-"))
        self.body = self.workdir / "payload.json"
        self.body.write_bytes(make_payload(200))
        self.problems: list[str] = []
        self.available = {
            "apns-mock": True,
            ONE_THREAD: True,
            "nginx": shutil.which("nginx") is not None,
            "nghttpd": shutil.which("nghttpd") is not None,
        }
        for name, ok in self.available.items():
            if not ok:
                log(f"{name} is not installed: it is left out of this run")
        self.server_pin = args.server_cpus if args.pin else None
        # Validation and recording stay on (the defaults). Authentication, where the build has it, is off for the
        # plain workloads: they send no credentials. The token variant turns it on.
        self.auth_flag = serve_has_flag(args.binary, "--auth")
        self.default_apns_mock_args = ["--auth", "none"] if self.auth_flag else []

    def make_server(self, name: str, max_recorded: int, apns_mock_args: list[str] | None = None) -> Server:
        if name in self.variants:
            # The run's default flags, as PLAIN: a variant is compared with plain apns-mock, not with a workload's
            # own flags (a record file, a store).
            binary, threads = self.variants[name]
            return ApnsMock(self.workdir, self.server_pin, binary, threads, max_recorded,
                            self.default_apns_mock_args + self.args.server_arg, name=name, checks_recordings=False)
        if is_apns_mock(name):
            flags = self.default_apns_mock_args if apns_mock_args is None or name == PLAIN else apns_mock_args
            threads = 1 if name == ONE_THREAD else self.args.threads
            return ApnsMock(self.workdir, self.server_pin, self.args.binary, threads, max_recorded,
                            flags + self.args.server_arg, name=name)
        if name == "nginx":
            return Nginx(self.workdir, self.server_pin)
        if name == NGHTTPD_PLAIN:
            return PlainNghttpd(self.workdir, self.server_pin)
        if name == NGHTTPD_CORES:
            return CoresNghttpd(self.workdir, self.server_pin, self.default_loops())
        return Nghttpd(self.workdir, self.server_pin)

    def default_loops(self) -> int:
        """The headline apns-mock row's event loops: `--threads`, else serve's default (one per usable core)."""
        return self.args.threads or self.server_cores()

    def server_cores(self) -> int:
        """The cores the servers may run on (the pinned set, or this process's): serve's default event loops."""
        if self.server_pin:
            return len(self.server_pin.split(","))
        return len(os.sched_getaffinity(0))

    def problem(self, message: str) -> None:
        log(f"PROBLEM: {message}")
        self.problems.append(message)

    def check_round(self, server: Server, workload: Workload, result: dict, stats: dict | None) -> None:
        """What makes the harness (not the speed) wrong: failed requests, and the recorder disagreeing."""
        requested = result["requested"]
        if is_apns_mock(server.name):
            refused = result["errored"]
            if (workload.refusals_allowed and 0 < refused <= workload.refusals_allowed
                    and result["failed"] == refused and result["succeeded"] + refused == requested
                    and result.get("status", {}).get("2xx") == result["succeeded"]):
                result["refused_at_start"] = refused  # stream gating (see Workload.stream_gated): expected
            elif result["succeeded"] != requested or result.get("status", {}).get("2xx") != requested:
                self.problem(
                    f"apns-mock {workload.shape}: {result['succeeded']} of {requested} succeeded "
                    f"({result['failed']} failed, {result['errored']} errored, status {result.get('status')}, "
                    f"codes {result.get('status_codes')})"
                    + (f"\n    h2load said: {result['h2load_stderr']}" if result.get("h2load_stderr") else "")
                    + f"\n    apns-mock's log ends with:\n{server.log_tail(10)}"
                )
            if stats is not None:
                # Every request h2load saw accepted must be recorded, once. (Requests h2load counts as errored,
                # e.g. on a closed connection, may or may not have reached the server: `received` is only shown.)
                accepted = result.get("status", {}).get("2xx", 0)
                stored = stats["recorder"]["stored"]
                by_200 = stats.get("byStatus", {}).get("200", 0)
                if stored != accepted or by_200 != accepted:
                    self.problem(
                        f"apns-mock {workload.shape}: recorder holds {stored} (byStatus 200: {by_200}, received "
                        f"{stats.get('received')}) but h2load counted {accepted} 2xx of {result['done']} done"
                    )
        elif result["succeeded"] == 0 or result["failed"] + result["errored"] > 0:
            self.problem(
                f"{server.name} {workload.shape}: {result['succeeded']} of {requested} succeeded "
                f"({result['failed']} failed, {result['errored']} errored)"
            )

    def run_workloads(self, workloads: list[Workload], rounds: int, servers: list[str]) -> list[dict]:
        """For each workload: fresh servers (so peak RSS is that workload's), a warm-up, then `rounds` rounds
        that visit the servers in turn (interleaved, so a noisy moment hurts every server alike)."""
        summaries = []
        for workload in workloads:
            max_recorded = max(workload.requests, 10_000) + 1000
            running: list[Server] = []
            readers: list[socket.socket] = []
            try:
                names = servers + ([PLAIN] if workload.paired_plain and "apns-mock" in servers else [])
                if workload.paired_plain and workload.extra_headers and "nghttpd" in servers:
                    names.append(NGHTTPD_PLAIN)
                if workload.device_tokens:  # the references serve one path: apns-mock against its plain twin only
                    names = [name for name in names if name in ("apns-mock", PLAIN)]
                # Variants run the plain load only: they take the run's default flags, never a workload's own. They
                # go right after apns-mock-1t, in the order given, so the builds whose CPU per push is subtracted
                # (floor_breakdown) run seconds apart in each round.
                if workload.key == "throughput" and "nghttpd" in names and self.default_loops() > 1:
                    names.insert(names.index("nghttpd") + 1, NGHTTPD_CORES)
                if workload.key == "throughput":
                    extra = [name for name in self.variants if name not in names]
                    at = names.index(ONE_THREAD) + 1 if ONE_THREAD in names else len(names)
                    names[at:at] = extra
                for name in names:
                    server = self.make_server(name, max_recorded, workload.apns_mock_args)
                    server.start()
                    running.append(server)
                    if workload.stalled_reader and isinstance(server, ApnsMock) and server.checks_recordings and name != PLAIN:
                        readers.append(stalled_reader(server.admin_port))
                    if workload.device_tokens and isinstance(server, ApnsMock) and name != PLAIN:
                        register_simulated_devices(server.admin_port, workload.device_tokens)
                for server in running:
                    warm = max(workload.clients, min(5000, workload.requests // 4))
                    run_h2load(self.args, server, workload, self.body, self.workdir, requests=warm, keep_log=False)
                    server.clear()
                per_server: dict[str, list[dict]] = {s.name: [] for s in running}
                kinds = ["logged"] * rounds if workload.latency_bound else ["throughput"] * rounds + ["latency"]
                for round_index, kind in enumerate(kinds):
                    for server in running:
                        cpu_before = server.cpu_seconds()
                        result = run_h2load(self.args, server, workload, self.body, self.workdir,
                                            keep_log=kind != "throughput")
                        cpu = server.cpu_seconds() - cpu_before
                        result["server_cpu_s"] = round(cpu, 3)
                        result["cpu_s_per_100k"] = round(cpu / result["done"] * 100_000, 3) if result["done"] else None
                        stats = None
                        if isinstance(server, ApnsMock) and server.checks_recordings:
                            stats = server.wait_recorded(result.get("status", {}).get("2xx", 0))
                            result["recorder_stored"] = stats["recorder"]["stored"]
                            result["recorder_received"] = stats.get("received")
                        self.check_round(server, workload, result, stats)
                        server.clear()
                        result["round"] = round_index + 1
                        result["kind"] = kind
                        per_server[server.name].append(result)
                        log(
                            f"{workload.key:<12} {server.name:<9} round {round_index + 1}/{len(kinds)} ({kind}): "
                            f"{result['req_per_s']:>10,.0f} req/s  p99 {fmt_ms(result.get('p99_us'))} ms  "
                            f"{result['succeeded']}/{result['requested']} ok"
                        )
                record_file = self.check_record_file(running, workload)
                store = self.check_store(running, workload)
                for server in running:
                    memory = server.memory_kb()
                    # Speed from the rounds that measure it; latency and exact codes from the logged ones.
                    rounds_data = [r for r in per_server[server.name] if r["kind"] != "latency"]
                    logged = [r for r in per_server[server.name] if r["kind"] != "throughput"]
                    summaries.append({
                        "workload": workload.key,
                        "label": workload.label,
                        "clients": workload.clients,
                        "streams": workload.streams,
                        "requests": workload.requests,
                        "server": server.name,
                        **({"variant": True} if server.name in self.variants else {}),
                        "req_per_s_median": median([r["req_per_s"] for r in rounds_data]),
                        "req_per_s_min": min(r["req_per_s"] for r in rounds_data),
                        "req_per_s_max": max(r["req_per_s"] for r in rounds_data),
                        "p50_us_median": median([r.get("p50_us") for r in logged]),
                        "p99_us_median": median([r.get("p99_us") for r in logged]),
                        "latency_rounds": len(logged),
                        "cpu_s_per_100k_median": median([r.get("cpu_s_per_100k") for r in rounds_data]),
                        "peak_rss_kb": memory["VmHWM"],
                        # Classes (h2load's summary) for every round; exact codes only where h2load logged.
                        "status_classes": {k: v for k, v in merge_counts([r.get("status", {})
                                           for r in per_server[server.name]]).items() if v},
                        "status_codes": merge_counts([r.get("status_codes", {}) for r in logged]),
                        "refused_at_start": sum(r.get("refused_at_start", 0) for r in per_server[server.name]),
                        "failed": sum(r["failed"] - r.get("refused_at_start", 0) for r in per_server[server.name]),
                        "rounds": per_server[server.name],
                        **({"record_file": record_file[server.name]} if record_file and server.name in record_file else {}),
                        **({"store": store[server.name]} if store and server.name in store else {}),
                    })
            finally:
                for reader in readers:
                    reader.close()
                for server in running:
                    server.stop()
        return summaries

    def cores_rows(self, workload: Workload, rounds: int, servers: list[str]) -> list[dict]:
        """The throughput workload with the servers on cores 0..n-1 and h2load on n..last, for every n that leaves
        h2load a core: how apns-mock scales with the cores it is given (its default event loop count follows)."""
        total = len(os.sched_getaffinity(0))
        rows = []
        saved = (self.server_pin, self.args.pin, self.args.client_cpu)
        try:
            for n in range(1, total):
                self.server_pin = ",".join(str(c) for c in range(n))
                self.args.pin, self.args.client_cpu = True, ",".join(str(c) for c in range(n, total))
                for row in self.run_workloads([workload], rounds, servers):
                    row["server_cpus"], row["client_cpus"] = self.server_pin, self.args.client_cpu
                    rows.append(row)
        finally:
            self.server_pin, self.args.pin, self.args.client_cpu = saved
        return rows

    def check_store(self, running: list, workload: Workload) -> dict | None:
        """With --store: how far the writer's queue grew, and how long it took to drain after the last round."""
        args = workload.apns_mock_args or []
        if "--store" not in args:
            return None
        kind = "postgres" if args[args.index("--store") + 1].startswith("postgres") else "sqlite"
        found = {}
        for server in (s for s in running if isinstance(s, ApnsMock) and s.checks_recordings and s.name != PLAIN):
            started = time.monotonic()
            while True:
                sink = next((s for s in server.stats().get("sinks", []) if s["name"] == kind), None)
                if sink is None:
                    self.problem(f"{server.name}: no {kind} sink in /admin/stats with {args}")
                    break
                if sink["queued"] == 0 or time.monotonic() - started > 120:
                    break
                time.sleep(0.05)
            if sink:
                found[server.name] = {"written": sink["written"], "peak_queued": sink["peakQueued"],
                                      "back_pressure_pauses": sink["backPressurePauses"],
                                      "drain_seconds": round(time.monotonic() - started, 2), "queued_at_end": sink["queued"]}
                if sink["queued"]:
                    self.problem(f"{server.name}: the {kind} writer still had {sink['queued']} queued after 120 s")
        return found

    def check_record_file(self, running: list, workload: Workload) -> dict | None:
        """With --record-file: once its queue has drained, the file must hold one JSON line per recording made."""
        args = workload.apns_mock_args or []
        if "--record-file" not in args:
            return None
        return {s.name: self.check_one_record_file(s, Path(s.record_file)) for s in running
                if isinstance(s, ApnsMock) and s.checks_recordings and s.name != PLAIN}

    def check_one_record_file(self, server, path: Path) -> dict:
        deadline = time.monotonic() + 60
        while True:
            # The writer empties its queue before it counts what it wrote: wait for both to settle.
            sink = next(s for s in server.stats().get("sinks", []) if s["name"] == "file")
            lines = sum(1 for _ in open(path, "rb"))
            if (sink["queued"] == 0 and sink["written"] == lines) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if sink["queued"] or sink["written"] != lines:
            self.problem(f"record file {path}: {lines} lines, sink written {sink['written']}, queued {sink['queued']}")
        return {"lines": lines, "written": sink["written"], "peak_queued": sink["peakQueued"],
                "back_pressure_pauses": sink["backPressurePauses"]}

    def memory_check(self, checkpoints: list[int]) -> dict:
        """Fill the recorder to each checkpoint with 200-byte pushes, RSS after each; then DELETE and compare."""
        capacity = checkpoints[-1]
        server = self.make_server("apns-mock", capacity)
        fill = Workload("fill", "recorder fill", 4, 100, 0)
        try:
            server.start()
            time.sleep(1.0)
            idle = server.memory_kb()["VmRSS"]
            log(f"memory: idle RSS {idle / 1024:.1f} MB (max-recorded {capacity:,})")
            rows, sent = [], 0
            for checkpoint in checkpoints:
                count = checkpoint - sent
                result = run_h2load(self.args, server, fill, self.body, self.workdir, requests=count, keep_log=False)
                sent = checkpoint
                stats = server.wait_recorded(checkpoint, timeout=30)
                if result["succeeded"] != count or stats["recorder"]["stored"] != checkpoint:
                    self.problem(
                        f"memory check: after {checkpoint:,} pushes h2load counted {result['succeeded']:,} of "
                        f"{count:,} ok and the recorder holds {stats['recorder']['stored']:,}"
                    )
                time.sleep(0.5)
                memory = server.memory_kb()
                rows.append({
                    "recorded": stats["recorder"]["stored"],
                    "rss_kb": memory["VmRSS"],
                    "peak_rss_kb": memory["VmHWM"],
                    "fill_req_per_s": result["req_per_s"],
                    "bytes_per_record": round((memory["VmRSS"] - idle) * 1024 / checkpoint) if checkpoint else None,
                })
                log(f"memory: {checkpoint:>9,} recorded -> RSS {memory['VmRSS'] / 1024:.1f} MB "
                    f"(filled at {result['req_per_s']:,.0f} req/s)")
            server.clear()
            # The allocator may hand freed memory back lazily: look a few times over a few seconds.
            after = []
            for _ in range(4):
                time.sleep(1.0)
                after.append(server.memory_kb()["VmRSS"])
            after_delete = after[-1]
            log(f"memory: after DELETE RSS {after_delete / 1024:.1f} MB (idle {idle / 1024:.1f} MB)")
            return {
                "idle_rss_kb": idle,
                "checkpoints": rows,
                "after_delete_rss_kb": after_delete,
                "after_delete_samples_kb": after,
                "after_delete_vs_idle": round(after_delete / idle, 3) if idle else None,
                "payload_bytes": self.body.stat().st_size,
            }
        finally:
            server.stop()


def add_ratios(summaries: list[dict]) -> None:
    """apns-mock's throughput against each reference, two ways, into apns-mock's summary of each workload.

    `ratio_<ref>`: the median over rounds of apns-mock's req/s divided by the reference's in the same round. Rounds
    visit the servers in turn, so round i of each ran within seconds of the others; this machine's speed drifts by
    a quarter within minutes (the same server's rounds spread that much), and a per-round ratio cancels the drift
    that a ratio of two medians, often taken from rounds minutes apart, keeps. `ratio_of_medians_<ref>` is the
    plain ratio of the medians, kept for comparison (runs before commit a1cadd1 reported only that one)."""
    by_workload: dict[str, dict[str, dict]] = {}
    for s in summaries:
        by_workload.setdefault(s["workload"], {})[s["server"]] = s
    for servers in by_workload.values():
      for mine in [row for row in servers.values() if is_measured(row)]:
        for ref in ("nginx", "nghttpd", NGHTTPD_CORES):
            theirs = servers.get(ref)
            if not theirs:
                continue
            # Throughput, and CPU per request, against the reference's, paired by round.
            mine[f"ratio_{ref}"], mine[f"ratio_{ref}_rounds"], mine[f"cpu_ratio_{ref}"] = paired_ratios(mine, theirs)
            if theirs["req_per_s_median"]:
                mine[f"ratio_of_medians_{ref}"] = round(mine["req_per_s_median"] / theirs["req_per_s_median"], 3)
        # A variant workload's share of plain apns-mock's throughput, and its CPU per request against it, paired
        # by round the same way (see Workload.paired_plain).
        plain = servers.get(PLAIN)
        if plain and mine["server"] == "apns-mock":
            add_plain_share(mine, plain)
    # nghttpd sent the variant's extra headers against nghttpd sent the plain load (NGHTTPD_PLAIN): what the
    # headers alone cost the transport.
    for servers in by_workload.values():
        if "nghttpd" in servers and NGHTTPD_PLAIN in servers:
            add_plain_share(servers["nghttpd"], servers[NGHTTPD_PLAIN])


def paired_ratios(row: dict, other: dict) -> tuple[float | None, list[float], float | None]:
    """`row`'s req/s over `other`'s in each round (median, and each round's) and its CPU per request over the
    other's (median): the two ran seconds apart in every round (see add_ratios)."""
    own = {r["round"]: r["req_per_s"] for r in row["rounds"] if r.get("kind") != "latency"}
    theirs = {r["round"]: r["req_per_s"] for r in other["rounds"] if r.get("kind") != "latency"}
    paired = [own[i] / theirs[i] for i in sorted(own) if i in theirs and theirs[i]]
    own_cpu = {r["round"]: r.get("cpu_s_per_100k") for r in row["rounds"] if r.get("kind") != "latency"}
    their_cpu = {r["round"]: r.get("cpu_s_per_100k") for r in other["rounds"] if r.get("kind") != "latency"}
    cpu_pairs = [own_cpu[i] / their_cpu[i] for i in sorted(own_cpu) if own_cpu[i] and their_cpu.get(i)]
    return (round(median(paired), 3) if paired else None, [round(x, 3) for x in paired],
            round(median(cpu_pairs), 3) if cpu_pairs else None)


def add_plain_share(row: dict, plain: dict) -> None:
    """`row`'s throughput as a share of its plain twin's and its CPU per request against the twin's, paired by
    round (the twin ran seconds apart in every round)."""
    row["ratio_plain"], row["ratio_plain_rounds"], row["cpu_ratio_plain"] = paired_ratios(row, plain)


def thread_count_comparison(summaries: list[dict], workers: int) -> dict | None:
    """The throughput workload's nghttpd with as many workers as apns-mock's default has loops (NGHTTPD_CORES)
    against one worker, paired by round, and apns-mock's default against each: how much of the default's loss
    against the one-worker reference the thread count alone costs libnghttp2's own server here."""
    rows = {s["server"]: s for s in summaries if s["workload"] == "throughput"}
    mine, one, many = rows.get("apns-mock"), rows.get("nghttpd"), rows.get(NGHTTPD_CORES)
    if not (mine and one and many):
        return None
    many_vs_one, _, many_cpu_vs_one = paired_ratios(many, one)
    return {
        "workers": workers,
        "nghttpd_workers_vs_one": many_vs_one,
        "nghttpd_workers_cpu_vs_one": many_cpu_vs_one,
        "apns_mock_vs_nghttpd_workers": mine.get(f"ratio_{NGHTTPD_CORES}"),
        "apns_mock_cpu_vs_nghttpd_workers": mine.get(f"cpu_ratio_{NGHTTPD_CORES}"),
        "apns_mock_vs_nghttpd": mine.get("ratio_nghttpd"),
    }


def print_thread_count_comparison(comparison: dict | None) -> None:
    if not comparison:
        return
    n = comparison["workers"]
    print(f"threads (throughput): nghttpd with {n} workers vs 1: {fmt_x(comparison['nghttpd_workers_vs_one'])} the "
          f"throughput, {fmt_x(comparison['nghttpd_workers_cpu_vs_one'])} the CPU per push; apns-mock's default ({n} "
          f"loops) vs nghttpd with {n} workers: {fmt_x(comparison['apns_mock_vs_nghttpd_workers'])} the throughput, "
          f"{fmt_x(comparison['apns_mock_cpu_vs_nghttpd_workers'])} the CPU per push (vs 1 worker: "
          f"{fmt_x(comparison['apns_mock_vs_nghttpd'])}; paired by round)")
    print()


def floor_breakdown(summaries: list[dict]) -> dict | None:
    """Where a push's CPU goes, from the builds `bench/run --floor` adds beside apns-mock-1t (all one event loop):
    transport-only answers at once (TLS, HTTP/2 and a 200 with an apns-id: what nghttpd does), no-recording decides
    and answers but keeps nothing. Each part is taken as a share of apns-mock-1t's CPU per push in the same round,
    median over the rounds: this machine's speed scales every figure of a moment alike, which a ratio cancels and a
    difference of two figures does not (differences of these CPU figures swung by more than the parts themselves)."""
    rows = {s["server"]: s for s in summaries if s["workload"] == "throughput"}
    if not all(name in rows for name in (TRANSPORT_ONLY, NO_RECORDING, ONE_THREAD)):
        return None

    def per_round(name):
        return {r["round"]: r["cpu_s_per_100k"] * 10 for r in rows.get(name, {}).get("rounds", [])
                if r.get("kind") != "latency" and r.get("cpu_s_per_100k")}

    transport, decided, full = per_round(TRANSPORT_ONLY), per_round(NO_RECORDING), per_round(ONE_THREAD)
    default, nghttpd = per_round("apns-mock"), per_round("nghttpd")
    rounds = [i for i in sorted(full) if i in transport and i in decided]
    if not rounds:
        return None

    def med(values):
        return round(median(values), 3) if values else None

    return {
        "rounds": len(rounds),
        "one_loop_us": med([full[i] for i in rounds]),
        "transport_share": med([transport[i] / full[i] for i in rounds]),
        "decision_share": med([(decided[i] - transport[i]) / full[i] for i in rounds]),
        "recording_share": med([(full[i] - decided[i]) / full[i] for i in rounds]),
        "own_vs_transport": med([(full[i] - transport[i]) / transport[i] for i in rounds]),
        "transport_vs_nghttpd": med([transport[i] / nghttpd[i] for i in rounds if nghttpd.get(i)]),
        "one_loop_vs_nghttpd": med([full[i] / nghttpd[i] for i in rounds if nghttpd.get(i)]),
        "default_vs_one_loop": med([default[i] / full[i] for i in rounds if default.get(i)]),
        # Each cut build with the default event loops against itself with one, where the run has both.
        "default_vs_one_loop_by_build": {
            name: med([many[i] / one[i] for i in rounds if many.get(i) and one.get(i)])
            for name, one in ((TRANSPORT_ONLY, transport), (NO_RECORDING, decided))
            for many in [per_round(name + DEFAULT_LOOPS)] if many
        },
    }


def print_floor(floor: dict | None, same_binary: bool) -> None:
    if not floor:
        return
    def line(label, share=None, note=""):
        cells = "" if share is None else f"{share:>4.0%}  ~{share * floor['one_loop_us']:.1f} µs"
        print(f"  {label:<68} {cells:<16}{note}".rstrip())
    print(f"where a push's CPU goes (throughput, one event loop each; per round, a share of {ONE_THREAD}'s CPU per "
          f"push, median over {floor['rounds']} rounds; {ONE_THREAD}: {floor['one_loop_us']:.2f} µs):")
    if same_binary:
        print("  (a harness check: the variants are apns-mock's own binary, so the parts below mean nothing)")
    line(f"transport: TLS, HTTP/2, a 200 with an apns-id ({TRANSPORT_ONLY})", floor["transport_share"],
         f"{fmt_x(floor['transport_vs_nghttpd'])} nghttpd's CPU per push")
    line(f"decision, metrics, apns-unique-id ({NO_RECORDING} - {TRANSPORT_ONLY})", floor["decision_share"])
    line(f"recording ({ONE_THREAD} - {NO_RECORDING})", floor["recording_share"])
    line(f"own work against the transport ({ONE_THREAD} / {TRANSPORT_ONLY} - 1)", None,
         fmt_x(floor["own_vs_transport"]))
    line(f"{ONE_THREAD} against nghttpd", None, f"{fmt_x(floor['one_loop_vs_nghttpd'])} its CPU per push")
    if floor["default_vs_one_loop"] is not None:
        line(f"the default event loops against one (apns-mock / {ONE_THREAD})", None, fmt_x(floor["default_vs_one_loop"]))
    for name, ratio in (floor.get("default_vs_one_loop_by_build") or {}).items():
        line(f"  the same for {name} ({name}{DEFAULT_LOOPS} / {name})", None, fmt_x(ratio))
    print()


def print_cores(rows: list[dict]) -> None:
    """req/s and CPU per request with the servers confined to N cores and h2load on the others."""
    if not rows:
        print("cores: this machine has too few cores to pin the servers and h2load apart")
        return
    print("cores (throughput -c 4 -m 100; servers pinned with taskset, h2load on the remaining cores):")
    print(f"{'server cores':>12} {'client cores':>12} {'server':<12} {'req/s median':>12} {'CPU µs/req':>10}")
    for r in rows:
        cpu = r["cpu_s_per_100k_median"]
        print(f"{r['server_cpus']:>12} {r['client_cpus']:>12} {r['server']:<12} {r['req_per_s_median']:>12,.0f} "
              f"{('-' if cpu is None else f'{cpu * 10:.2f}'):>10}")
    print()


def merge_counts(dicts: list[dict]) -> dict:
    merged: dict = {}
    for d in dicts:
        for k, v in d.items():
            merged[k] = merged.get(k, 0) + v
    return merged


def make_payload(size: int) -> bytes:
    """A realistic alert payload padded to exactly `size` bytes of valid JSON."""
    base = {"aps": {"alert": {"title": "Benchmark", "body": ""}, "badge": 1, "sound": "default"}, "id": "bench-0001"}
    empty = len(json.dumps(base, separators=(",", ":")).encode())
    base["aps"]["alert"]["body"] = "x" * max(0, size - empty)
    data = json.dumps(base, separators=(",", ":")).encode()
    assert len(data) == size, len(data)
    return data


# --------------------------------------------------------------------------------------------------------------
# Token-auth variant (HOOK: provider-token authentication does not exist yet)


def serve_has_flag(binary: str, flag: str) -> bool:
    try:
        completed = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return re.search(rf"(^|\s){re.escape(flag)}\b", completed.stdout + completed.stderr) is not None


def provider_token(binary: str) -> tuple[str | None, str]:
    """HOOK(token-auth): `apns-mock token` prints a provider token (JWT, ES256) signed with the development key
    (Certs/AuthKey_<KEYID>.p8, which the server trusts from its --certs-dir). The benchmark then adds a
    `throughput+token` workload (-c 4 -m 100) that sends `authorization: bearer <JWT>` on every request to
    an apns-mock started with `--auth token`. Adjust the arguments here if the command changes.
    Returns (JWT, "") or (None, why it is skipped)."""
    try:
        probe = subprocess.run([binary, "token", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"`apns-mock token --help` failed: {error}"
    if probe.returncode != 0:
        return None, "`apns-mock token` is not a command yet"
    if not serve_has_flag(binary, "--auth"):
        return None, "`apns-mock serve` has no --auth flag yet"
    completed = subprocess.run([binary, "token", "--certs-dir", str(CERTS)], capture_output=True, text=True,
                               timeout=30)
    lines = [line.strip() for line in completed.stdout.splitlines() if line.strip()]
    if completed.returncode != 0 or not lines or lines[-1].count(".") != 2:
        why = (completed.stderr.strip() or completed.stdout.strip()).splitlines()
        return None, f"`apns-mock token --certs-dir Certs` printed no JWT ({why[-1] if why else 'no output'})"
    return lines[-1], ""


# --------------------------------------------------------------------------------------------------------------
# Output


def fmt_ms(us) -> str:
    return "-" if us is None else f"{us / 1000:.2f}"


def fmt_mb(kb) -> str:
    return "-" if kb is None else f"{kb / 1024:.1f}"


def fmt_x(ratio) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def fmt_share(ratio) -> str:
    """A share of another run's throughput, to a tenth of a percent: rounded to a whole one, 84.8% printed as 85%
    beside a MISS of the 85% target."""
    return "-" if ratio is None else f"{ratio:.1%}"


def fmt_ratio(a, b) -> str:
    return "-" if not a or not b else f"{a / b:.2f}x"


def print_workload_table(summaries: list[dict]) -> None:
    header = (f"{'workload':<17} {'h2load':<12} {'server':<16} {'req/s median':>12} {'(min-max)':>19} {'/nginx':>6} "
              f"{'/nghttpd':>8} {'p50 ms':>7} {'p99 ms':>7} {'CPU µs/req':>10} {'CPU/nginx':>9} {'peak RSS MB':>11}  status")
    print(header)
    print("-" * len(header))
    by_workload: dict[str, list[dict]] = {}
    for s in summaries:
        by_workload.setdefault(s["workload"], []).append(s)
    for key, rows in by_workload.items():
        for i, r in enumerate(rows):
            label = r["label"] if i == 0 else ""
            shape = f"-c {r['clients']} -m {r['streams']}" if i == 0 else f"-n {r['requests']}" if i == 1 else ""
            mine = is_measured(r)
            cpu_nginx = fmt_x(r.get("cpu_ratio_nginx")) if mine else ""
            ratio_nginx = fmt_x(r.get("ratio_nginx")) if mine else ""
            ratio_ngh = fmt_x(r.get("ratio_nghttpd")) if mine else ""
            span = f"({r['req_per_s_min']:,.0f}-{r['req_per_s_max']:,.0f})"
            codes = ",".join(f"{k}:{v}" for k, v in sorted(r["status_classes"].items())) or "-"
            if r.get("refused_at_start"):
                codes += f" ({r['refused_at_start']} refused at start: gating)"
            if r["failed"]:
                codes += f" FAILED {r['failed']}"
            cpu = r["cpu_s_per_100k_median"]
            # CPU seconds per 100,000 requests = µs per request × 10.
            print(f"{label:<17} {shape:<12} {r['server']:<16} {r['req_per_s_median']:>12,.0f} {span:>19} "
                  f"{ratio_nginx:>6} {ratio_ngh:>8} {fmt_ms(r['p50_us_median']):>7} {fmt_ms(r['p99_us_median']):>7} "
                  f"{('-' if cpu is None else f'{cpu * 10:.2f}'):>10} {cpu_nginx:>9} {fmt_mb(r['peak_rss_kb']):>11}  {codes}")
    print()


def print_memory(memory: dict) -> None:
    print(f"apns-mock recorder memory ({memory['payload_bytes']}-byte payloads), idle RSS "
          f"{fmt_mb(memory['idle_rss_kb'])} MB:")
    print(f"{'recorded':>12} {'RSS MB':>9} {'peak RSS MB':>12} {'bytes/record':>13} {'fill req/s':>11}")
    for row in memory["checkpoints"]:
        print(f"{row['recorded']:>12,} {fmt_mb(row['rss_kb']):>9} {fmt_mb(row['peak_rss_kb']):>12} "
              f"{row['bytes_per_record']:>13,} {row['fill_req_per_s']:>11,.0f}")
    print(f"after DELETE /admin/notifications: RSS {fmt_mb(memory['after_delete_rss_kb'])} MB = "
          f"{memory['after_delete_vs_idle']:.2f}x idle")
    print()


def print_record_file(summaries: list[dict]) -> None:
    """apns-mock's throughput with --record-file beside its default, and whether the file was complete."""
    def find(workload):
        return next((s for s in summaries if s["workload"] == workload and s["server"] == "apns-mock"), None)
    recording = find("recordfile")
    # The plain rounds run beside the file's (see Workload.paired_plain); without them, the throughput workload's.
    plain = next((s for s in summaries if s["workload"] == "recordfile" and s["server"] == PLAIN), None) or find("throughput")
    if not plain or not recording or not plain["req_per_s_median"]:
        return
    ratio = recording.get("ratio_plain") or recording["req_per_s_median"] / plain["req_per_s_median"]
    how = "paired by round" if recording.get("ratio_plain") else "medians"
    file = recording.get("record_file") or {}
    print(f"record file: {recording['req_per_s_median']:,.0f} req/s with --record-file vs {plain['req_per_s_median']:,.0f} "
          f"without ({fmt_share(ratio)}, {how}); file complete: {file.get('lines')} lines = {file.get('written')} written, "
          f"peak queue {file.get('peak_queued')}, back-pressure pauses {file.get('back_pressure_pauses')}")


def print_store(summaries: list[dict]) -> None:
    """apns-mock's throughput with --store sqlite/postgres beside the memory store, the writer's peak queue and drain time."""
    for kind in ("sqlite", "postgres"):
      for name in ("apns-mock", ONE_THREAD):
        plain = next((s for s in summaries if s["workload"] == "throughput" and s["server"] == name), None)
        stored = next((s for s in summaries if s["workload"] == kind and s["server"] == name), None)
        if not plain or not stored or not plain["req_per_s_median"]:
            continue
        store = stored.get("store") or {}
        paired = next((s for s in summaries if s["workload"] == kind and s["server"] == PLAIN), None)
        if paired and stored.get("ratio_plain"):
            plain, share, how = paired, stored["ratio_plain"], "paired by round"
        else:
            share, how = stored["req_per_s_median"] / plain["req_per_s_median"], "medians"
        print(f"{kind} store ({name}): {stored['req_per_s_median']:,.0f} req/s vs {plain['req_per_s_median']:,.0f} in memory "
              f"({fmt_share(share)}, {how}); writer queue peak {store.get('peak_queued')}, "
              f"back-pressure pauses {store.get('back_pressure_pauses')}, drained {store.get('drain_seconds')} s after the last round")


def targets(summaries: list[dict], memory: dict | None) -> list[dict]:
    """The issue's targets, evaluated on this run (reported, never fatal)."""
    def get(workload, server, key):
        for s in summaries:
            if s["workload"] == workload and s["server"] == server:
                return s.get(key)
        return None

    found = []

    def add(name, value, limit, ok, text):
        found.append({"target": name, "value": value, "limit": limit, "met": ok, "text": text})

    # Paired per-round ratios (see add_ratios), with the ratio of the medians alongside.
    for ref, limit in (("nginx", 2.0), ("nghttpd", 0.5)):
        ratio = get("throughput", "apns-mock", f"ratio_{ref}")
        plain = get("throughput", "apns-mock", f"ratio_of_medians_{ref}")
        if ratio:
            add(f"throughput vs {ref} (-c 4 -m 100)", ratio, f">= {limit}", ratio >= limit,
                f"{ratio:.2f}x (medians: {plain:.2f}x)" if plain else f"{ratio:.2f}x")
    # Each variant's throughput as a share of the plain run's, against its issue's floor.
    # Paired by round with plain apns-mock in the same workload when it ran there (Workload.paired_plain).
    plain = get("throughput", "apns-mock", "req_per_s_median")
    for workload, name, floor in (("sqlite", "throughput with --store sqlite vs memory", 0.5),
                                  ("postgres", "throughput with --store postgres vs memory", 0.3),
                                  ("livefeed", "throughput with a stalled live-feed reader", 0.95),
                                  ("recordfile", "throughput with --record-file vs without", 0.9)):
        variant = get(workload, "apns-mock", "req_per_s_median")
        paired = get(workload, "apns-mock", "ratio_plain")
        if paired:
            medians = variant / get(workload, PLAIN, "req_per_s_median")
            add(name, paired, f">= {floor:.2f}", paired >= floor, f"{fmt_share(paired)} paired (medians: {fmt_share(medians)})")
        elif plain and variant:
            add(name, round(variant / plain, 2), f">= {floor:.2f}", variant / plain >= floor, fmt_share(variant / plain))
    # Issue 51: tenants cost at most 3% CPU per push, paired by round with plain apns-mock.
    tenants_cpu = get("tenants", "apns-mock", "cpu_ratio_plain")
    if tenants_cpu:
        add("CPU per push with --tenants by-topic vs off", round(tenants_cpu, 3), "<= 1.03", tenants_cpu <= 1.03,
            f"{tenants_cpu:.3f}x paired")
    # Issue 50: 10,000 simulated devices cost at most 5% CPU per push, paired by round with a mock that knows none.
    devices_cpu = get("devices", "apns-mock", "cpu_ratio_plain")
    if devices_cpu:
        add(f"CPU per push to {SIMULATED_DEVICES:,} simulated devices vs unknown tokens", round(devices_cpu, 3), "<= 1.05",
            devices_cpu <= 1.05, f"{devices_cpu:.3f}x paired")
    pa, pn = get("latency", "apns-mock", "p99_us_median"), get("latency", "nginx", "p99_us_median")
    if pa and pn:
        add("p99 latency vs nginx (-c 1 -m 1)", round(pa / pn, 2), "<= 1.5", pa / pn <= 1.5,
            f"{fmt_ms(pa)} ms vs {fmt_ms(pn)} ms = {pa / pn:.2f}x")
    # Issue 19: the default configuration (one event loop per usable core) against the references, and token auth.
    ngh = get("throughput", "apns-mock", "ratio_nghttpd")
    if ngh:
        add("default config: throughput vs nghttpd", ngh, ">= 0.8", ngh >= 0.8, f"{ngh:.2f}x")
    cpu = get("throughput", "apns-mock", "cpu_ratio_nginx")
    if cpu:
        add("default config: CPU per request vs nginx", cpu, "<= 0.6", cpu <= 0.6, f"{cpu:.2f}x")
    one = get("throughput", ONE_THREAD, "cpu_s_per_100k_median")
    default_cpu = get("throughput", "apns-mock", "cpu_s_per_100k_median")
    if one and default_cpu:
        add("default config: CPU per request vs --threads 1", round(default_cpu / one, 2), "<= 1.0",
            default_cpu / one <= 1.0, f"{default_cpu * 10:.2f} vs {one * 10:.2f} µs = {default_cpu / one:.2f}x")
    token_rate = get("token", "apns-mock", "req_per_s_median")
    plain_rate = get("throughput", "apns-mock", "req_per_s_median")
    token_paired = get("token", "apns-mock", "ratio_plain")
    if token_paired:
        medians = token_rate / get("token", PLAIN, "req_per_s_median")
        add("token auth vs --auth none", token_paired, ">= 0.85", token_paired >= 0.85,
            f"{fmt_share(token_paired)} paired (medians: {fmt_share(medians)})")
    elif token_rate and plain_rate:
        add("token auth vs --auth none", round(token_rate / plain_rate, 2), ">= 0.85", token_rate / plain_rate >= 0.85,
            fmt_share(token_rate / plain_rate))
    # The row above includes what the JWT's bytes cost the transport (h2load never indexes `authorization`, so
    # each request carries and decodes it): nghttpd pays that too. Net of it is what apns-mock's token checks cost.
    net = token_net_of_header(summaries)
    if net:
        add("token auth vs --auth none, net of the header", net["share"], ">= 0.85", net["share"] >= 0.85,
            f"{fmt_share(net['share'])} (the header alone: +{net['header_us']:.2f} µs on nghttpd)")
    floor = floor_breakdown(summaries)
    if floor and floor["own_vs_transport"] is not None:
        own = floor["own_vs_transport"]
        add("own work vs the transport (--threads 1, --floor)", own, "< 1.0", own < 1.0,
            f"{own:.2f}x (transport {floor['transport_share']:.0%} of a push)")
    if memory:
        last = memory["checkpoints"][-1]
        if last["recorded"] >= 1_000_000:
            mb = last["rss_kb"] / 1024
            add("RSS with 1,000,000 recorded", round(mb, 1), "<= 600 MB", mb <= 600, f"{mb:.0f} MB")
        ratio = memory["after_delete_vs_idle"]
        add("RSS after DELETE vs idle", ratio, "<= 1.10", ratio <= 1.10,
            f"{fmt_mb(memory['after_delete_rss_kb'])} MB vs {fmt_mb(memory['idle_rss_kb'])} MB = {ratio:.2f}x")
    return found


def token_net_of_header(summaries: list[dict]) -> dict | None:
    """Token auth's throughput share without what the `authorization` header's bytes cost the transport, from CPU
    per request in each round of the token workload: apns-mock's extra CPU with token auth (against PLAIN), less
    nghttpd's extra CPU for the same header (against NGHTTPD_PLAIN); the share is plain CPU over plain CPU plus that
    rest, median over rounds. The header's cost is a difference of two figures measured seconds apart, so it holds
    only as well as those rounds do; the gross row stays the issue's figure."""
    rows = {s["server"]: s for s in summaries if s["workload"] == "token"}
    names = ("apns-mock", PLAIN, "nghttpd", NGHTTPD_PLAIN)
    if not all(name in rows for name in names):
        return None
    cpu = {name: {r["round"]: r["cpu_s_per_100k"] * 10 for r in rows[name]["rounds"]
                  if r.get("kind") != "latency" and r.get("cpu_s_per_100k")} for name in names}
    rounds = [i for i in sorted(cpu["apns-mock"]) if all(i in cpu[name] for name in names)]
    if not rounds:
        return None
    shares, headers = [], []
    for i in rounds:
        header = cpu["nghttpd"][i] - cpu[NGHTTPD_PLAIN][i]
        own = cpu["apns-mock"][i] - cpu[PLAIN][i] - header
        # A round so noisy that the rest comes out below minus plain's whole push says nothing: left out.
        if cpu[PLAIN][i] + own > 0:
            shares.append(cpu[PLAIN][i] / (cpu[PLAIN][i] + own))
        headers.append(header)
    if not shares:
        return None
    return {"share": round(median(shares), 3), "header_us": round(median(headers), 3), "rounds": len(rounds)}


def print_targets(found: list[dict]) -> None:
    if not found:
        return
    print("targets (issues 6, 12 and 19):")
    for t in found:
        print(f"  [{'met ' if t['met'] else 'MISS'}] {t['target']:<48} {t['text']:<32} target {t['limit']}")
    print()


def print_scalability(summaries: list[dict]) -> None:
    print("connections (one round each; -m chosen so about 100 streams are in flight, 1 per connection past 100):")
    servers = []
    for s in summaries:
        if s["server"] not in servers:
            servers.append(s["server"])
    print(f"{'connections':>11} {'-m':>4} " + " ".join(f"{name + ' req/s':>15} {'p99 ms':>7} {'RSS MB':>7}" for name in servers))
    shapes = []
    for s in summaries:
        if (s["clients"], s["streams"]) not in shapes:
            shapes.append((s["clients"], s["streams"]))
    for c, m in shapes:
        cells = []
        for name in servers:
            row = next((s for s in summaries if s["server"] == name and s["clients"] == c), None)
            if row is None:
                cells.append(f"{'-':>15} {'-':>7} {'-':>7}")
            else:
                cells.append(f"{row['req_per_s_median']:>15,.0f} {fmt_ms(row['p99_us_median']):>7} "
                             f"{fmt_mb(row['peak_rss_kb']):>7}")
        print(f"{c:>11} {m:>4} " + " ".join(cells))
    print()


def git(*args) -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def tool_version(cmd: list[str]) -> str:
    try:
        completed = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        return (completed.stdout + completed.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unknown"


# --------------------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="one short round of each workload: checks the harness")
    mode.add_argument("--scalability", action="store_true", help="connections 1..1000, recorder 10k..1M")
    parser.add_argument("--binary", required=True, help="the release apns-mock executable")
    parser.add_argument("--rounds", type=int, help="rounds per workload (full mode: 5)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every request count (e.g. 0.5)")
    parser.add_argument("--threads", type=int, default=0,
                        help="the headline apns-mock's event loops (default: serve's own, one per usable core, what "
                             "users run); the apns-mock-1t row always runs --threads 1, like the references' one worker")
    parser.add_argument("--pin", action="store_true",
                        help="taskset: servers on --server-cpus, h2load on --client-cpu (needs 2+ cores)")
    parser.add_argument("--server-cpus", default="0")
    parser.add_argument("--client-cpu", default="1")
    parser.add_argument("--servers", default=f"apns-mock,{ONE_THREAD},nginx,nghttpd", help="comma-separated subset")
    parser.add_argument("--cores", action="store_true",
                        help="also the throughput workload with the servers pinned to 1, 2, … cores and h2load on the rest")
    parser.add_argument("--token", dest="token", action="store_const", const="yes", default="auto",
                        help="require the token-auth workload (default: run it when `apns-mock token` works)")
    parser.add_argument("--no-token", dest="token", action="store_const", const="no",
                        help="skip the token-auth workload")
    parser.add_argument("--server-arg", action="append", default=[], help="extra apns-mock flag (repeatable)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=BINARY[@THREADS]",
                        help="another apns-mock build in the throughput workload beside the others, with --threads 1 "
                             "or THREADS (a number, or default: serve's own); its recordings are not checked "
                             "(repeatable; bench/run --floor passes its builds)")
    parser.add_argument("--workloads", help="comma-separated subset of throughput,connections,latency,recordfile,sqlite,postgres,broadcast,tenants,devices,livefeed,token")
    parser.add_argument("--postgres", help="the postgres://USER@HOST:PORT/DB the postgres workload uses (each row gets a "
                        "fresh database beside DB); default: a PostgreSQL server of the bench's own")
    parser.add_argument("--no-memory", action="store_true", help="skip the 1,000,000-notification memory check")
    parser.add_argument("--json", help="where to write the JSON (default: bench/results/<UTC>-<commit>.json; "
                        "--quick writes none unless given)")
    args = parser.parse_args()

    atexit.register(cleanup_servers)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda s, _f: sys.exit(128 + s))

    try:
        bench = Bench(args)
    except HarnessError as error:
        log(str(error))
        return 2
    atexit.register(shutil.rmtree, bench.workdir, True)
    servers = [name for name in args.servers.split(",") if name and bench.available.get(name)]
    if "apns-mock" not in servers:
        servers.insert(0, "apns-mock")
    scale = lambda n: max(1000, int(n * args.scale))  # noqa: E731
    mode_name = "quick" if args.quick else "scalability" if args.scalability else "full"
    started = time.monotonic()

    token, token_note = None, "not asked for"
    if args.token != "no" and mode_name != "scalability":
        token, token_note = provider_token(args.binary)
        if token is None:
            message = f"token-auth variant skipped: {token_note} (HOOK(token-auth) in bench/bench.py)"
            if args.token == "yes":
                bench.problem(message)
            else:
                log(message)

    summaries: list[dict] = []
    scalability: list[dict] = []
    memory = None
    result_doc: dict = {}
    try:
        if mode_name in ("quick", "full"):
            if args.quick:
                rounds = args.rounds or 1
                workloads = [
                    Workload("throughput", "throughput", 4, 100, scale(20_000)),
                    Workload("connections", "many connections", 50, 10, scale(20_000)),
                    Workload("latency", "latency", 1, 1, scale(2_000)),
                ]
            else:
                rounds = args.rounds or 5
                workloads = [
                    Workload("throughput", "throughput", 4, 100, scale(400_000)),
                    Workload("connections", "many connections", 50, 10, scale(200_000)),
                    Workload("latency", "latency", 1, 1, scale(50_000)),
                ]
            # The NDJSON record file beside the default: the same load, every recording also written to a file.
            workloads.append(Workload("recordfile", "throughput+record-file", 4, 100, workloads[0].requests,
                                      apns_mock_args=bench.default_apns_mock_args
                                      + ["--record-file", str(bench.workdir / "bench-record.ndjson")],
                                      paired_plain=True))
            # Live Activity broadcasts: the same load to /4/broadcasts/apps/<bundle> on a channel a scenario declares.
            broadcast_scenario = bench.workdir / "bench-broadcast.yaml"
            broadcast_scenario.write_text(
                f"name: bench-broadcast\nchannels:\n  - {{name: bench, bundleId: {TOPIC}, id: {BROADCAST_CHANNEL}}}\n")
            workloads.append(Workload("broadcast", "broadcast", 4, 100, workloads[0].requests,
                                      [f"apns-channel-id: {BROADCAST_CHANNEL}", "apns-push-type: LiveActivity"],
                                      bench.default_apns_mock_args + ["--scenario", str(broadcast_scenario)],
                                      path=f"/4/broadcasts/apps/{TOPIC}", push_headers=False))
            # The same load with every recording also kept in SQLite (--store sqlite:PATH).
            workloads.append(Workload("sqlite", "throughput+sqlite store", 4, 100, workloads[0].requests,
                                      apns_mock_args=bench.default_apns_mock_args
                                      + ["--store", f"sqlite:{bench.workdir / 'bench.sqlite'}"], paired_plain=True))
            # The same load with every recording also written to PostgreSQL (--store postgres://…), one database per row.
            if not args.workloads or "postgres" in args.workloads.split(","):
                address = args.postgres
                if not address:
                    local = LocalPostgres(bench.workdir)
                    atexit.register(local.stop)
                    address = local.address
                workloads.append(Workload("postgres", "throughput+postgres store", 4, 100, workloads[0].requests,
                                          apns_mock_args=bench.default_apns_mock_args + ["--store", address],
                                          paired_plain=True))
            # Tenants by topic (--tenants): the same load, each push's tenant found and kept on its recording.
            workloads.append(Workload("tenants", "throughput+tenants", 4, 100, workloads[0].requests,
                                      apns_mock_args=bench.default_apns_mock_args + ["--tenants", "by-topic"],
                                      paired_plain=True))
            # Simulated devices (issue 50): 10,000 registered in a mix of states, every push to one of them in turn;
            # its twin sends the same pushes to a mock that knows none of them.
            workloads.append(Workload("devices", "throughput+simulated devices", 4, 100, workloads[0].requests,
                                      paired_plain=True, device_tokens=SIMULATED_DEVICES))
            # The same load with a live-feed reader that has stopped reading (a stalled inspector tab).
            workloads.append(Workload("livefeed", "throughput+stalled feed", 4, 100, workloads[0].requests,
                                      stalled_reader=True, paired_plain=True))
            if token:
                workloads.append(Workload("token", "throughput+token", 4, 100, workloads[0].requests,
                                          [f"authorization: bearer {token}"], ["--auth", "token"], stream_gated=True,
                                          paired_plain=True))
            if args.workloads:
                wanted = args.workloads.split(",")
                workloads = [w for w in workloads if w.key in wanted]
            summaries = bench.run_workloads(workloads, rounds, servers)
            add_ratios(summaries)
            print()
            print(f"apns-mock vs nginx vs nghttpd: h2load, {bench.body.stat().st_size}-byte POST, TLS + HTTP/2, "
                  f"{rounds} round(s) per workload (+1 logged for latency where h2load keeps streams in flight), "
                  f"{len(os.sched_getaffinity(0))} cores, apns-mock "
                  f"--threads {args.threads or 'default (' + str(bench.server_cores()) + ')'}"
                  f"{', pinned' if args.pin else ''}; {ONE_THREAD}: --threads 1")
            print_workload_table(summaries)
            result_doc["threads"] = thread_count_comparison(summaries, bench.default_loops())
            print_thread_count_comparison(result_doc["threads"])
            print_floor(floor_breakdown(summaries), same_binary=any(b == args.binary for b, _ in bench.variants.values()))
            if args.cores:
                cores = bench.cores_rows(Workload("throughput", "throughput", 4, 100, scale(400_000)), rounds, servers)
                print_cores(cores)
                result_doc["cores"] = cores
            print_record_file(summaries)
            print_store(summaries)
            if not args.no_memory:
                checkpoints = [2_000, 20_000] if args.quick else [10_000, 100_000, 1_000_000]
                memory = bench.memory_check([scale(c) if args.quick else c for c in checkpoints])
                print_memory(memory)
        else:
            rounds = args.rounds or 1
            shapes = [(1, 100), (10, 10), (100, 1), (1000, 1)]
            workloads = [Workload(f"c{c}", f"{c} connections", c, m, scale(200_000)) for c, m in shapes]
            scalability = bench.run_workloads(workloads, rounds, servers)
            print()
            print_scalability(scalability)
            if not args.no_memory:
                memory = bench.memory_check([10_000, 100_000, 1_000_000])
                print_memory(memory)
    except HarnessError as error:
        bench.problem(str(error))

    found = targets(summaries, memory) if mode_name == "full" else []
    print_targets(found)

    elapsed = time.monotonic() - started
    result_doc = {
        "mode": mode_name,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git("rev-parse", "HEAD"),
        "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "cpu_model": next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), None),
        "config": {
            "apns_mock_threads": args.threads,
            "pinned": args.pin,
            "server_cpus": args.server_cpus if args.pin else None,
            "client_cpu": args.client_cpu if args.pin else None,
            "payload_bytes": bench.body.stat().st_size,
            "headers": HEADERS,
            "extra_apns_mock_args": args.server_arg,
            "variants": {name: {"binary": b, "threads": t or "default"} for name, (b, t) in bench.variants.items()},
            "apns_mock_args": bench.default_apns_mock_args,
            "token_variant": bool(token),
            "token_note": token_note if not token else "",
        },
        "versions": {
            "h2load": tool_version(["h2load", "--version"]),
            "nghttpd": tool_version(["nghttpd", "--version"]) if bench.available["nghttpd"] else None,
            "nginx": tool_version(["nginx", "-v"]) if bench.available["nginx"] else None,
        },
        "workloads": summaries,
        "floor": floor_breakdown(summaries),
        "threads": result_doc.get("threads"),
        "cores": result_doc.get("cores"),
        "scalability": scalability,
        "memory": memory,
        "targets": found,
        "problems": bench.problems,
        "seconds": round(elapsed, 1),
    }
    out = args.json
    if out is None and mode_name != "quick":
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        short = git("rev-parse", "--short", "HEAD") or "nogit"
        suffix = "-scalability" if mode_name == "scalability" else ""
        out = str(BENCH_DIR / "results" / f"{stamp}-{short}{suffix}.json")
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result_doc, indent=2) + "\n")
        print(f"results: {out}")

    if bench.problems:
        print(f"HARNESS PROBLEMS ({len(bench.problems)}):")
        for p in bench.problems:
            print(f"  - {p}")
        print(f"bench {mode_name}: FAILED after {elapsed:.0f} s")
        return 1
    print(f"bench {mode_name}: ok in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

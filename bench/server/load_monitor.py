"""The load benchmark's server and its measurements (bench/server/load.py): start the server
(pinned to its own core), and a Monitor thread polling /proc for the server's memory and the
CPU seconds of the server, its children (the fine-tune runs in a child process of the server,
analysis/core/execution/child.py), the client side and the whole machine."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLK = os.sysconf("SC_CLK_TCK")


def _stat(path: str) -> list[str] | None:
    """Fields 3.. of a /proc stat file (after the command name): [0] state, [1] ppid,
    [11] utime, [12] stime, [16] nice."""
    try:
        with open(path) as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _cpu(fields: list[str]) -> float:
    return (int(fields[11]) + int(fields[12])) / CLK


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _machine() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot (/proc/stat)."""
    vals = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    total = sum(vals[:8])
    return (total - vals[3] - vals[4]) / CLK, total / CLK


def _tree(parent: dict[int, int], root: int) -> set[int]:
    """``root`` and its descendants, from {pid: parent pid}."""
    kids: dict[int, list[int]] = {}
    for pid, pp in parent.items():
        kids.setdefault(pp, []).append(pid)
    out, todo = set(), [root]
    while todo:
        p = todo.pop()
        out.add(p)
        todo.extend(kids.get(p, []))
    return out


def processes() -> tuple[dict[int, int], dict[int, list[str]]]:
    """{pid: parent pid} and {pid: its stat fields (:func:`_stat`)} of every process."""
    parent: dict[int, int] = {}
    stats: dict[int, list[str]] = {}
    for d in os.scandir("/proc"):
        if d.name.isdigit():
            f = _stat(f"/proc/{d.name}/stat")
            if f:
                parent[int(d.name)], stats[int(d.name)] = int(f[1]), f
    return parent, stats


def tree_cpu(root: int) -> float:
    """utime+stime (s) of ``root`` and every live descendant."""
    parent, stats = processes()
    return sum(_cpu(stats[p]) for p in _tree(parent, root) if p in stats)


class Monitor(threading.Thread):
    """Polls, every ``every`` s: VmRSS of the server and its descendants (peak per phase); CPU
    seconds of the server process itself (and, within it, of its threads running at a raised
    niceness: the queue's job threads), of each of its descendant processes by pid (the
    fine-tune's child: a child that has ended keeps the seconds last seen), of the client side
    (this process and its children: Playwright and Chromium) and of the whole machine.
    ``mark(name)`` keeps the counters at a moment."""

    def __init__(self, pid: int, every: float = 0.25):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.phase = "start"
        self.peak: dict[str, int] = {}
        self.own_cpu = 0.0                        # the server process itself
        self.job_cpu: dict[int, float] = {}      # tid -> cpu, its threads seen with nice > 0
        self.job_nice: set[int] = set()
        self.child_cpu: dict[int, float] = {}    # pid -> cpu, the server's descendants
        self.child_nice: set[int] = set()
        self.client_cpu: dict[int, float] = {}   # pid -> cpu
        self.marks: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._halt = threading.Event()

    def poll(self) -> None:
        parent, stats = processes()
        server = _tree(parent, self.pid)
        client = _tree(parent, os.getpid()) - server
        rss = sum(_status_kb(p, "VmRSS") for p in server) * 1024
        with self._lock:
            self.peak[self.phase] = max(self.peak.get(self.phase, 0), rss)
            if self.pid in stats:
                self.own_cpu = max(self.own_cpu, _cpu(stats[self.pid]))
            for p in server - {self.pid}:
                if p in stats:
                    self.child_cpu[p] = max(self.child_cpu.get(p, 0.0), _cpu(stats[p]))
                    if int(stats[p][16]) > 0 and _cpu(stats[p]) > 0.5:
                        self.child_nice.add(int(stats[p][16]))
            for p in client:
                if p in stats:
                    self.client_cpu[p] = max(self.client_cpu.get(p, 0.0), _cpu(stats[p]))
            try:
                tasks = list(os.scandir(f"/proc/{self.pid}/task"))
            except OSError:
                tasks = []
            for t in tasks:
                f = _stat(f"/proc/{self.pid}/task/{t.name}/stat")
                if f and int(f[16]) > 0:
                    self.job_nice.add(int(f[16]))
                    self.job_cpu[int(t.name)] = max(self.job_cpu.get(int(t.name), 0.0), _cpu(f))

    def mark(self, name: str) -> None:
        self.poll()
        with self._lock:
            busy, total = _machine()
            children = sum(self.child_cpu.values())
            self.marks[name] = {"t": time.monotonic(), "server": self.own_cpu + children,
                                "own": self.own_cpu, "job": sum(self.job_cpu.values()),
                                "children": children, "client": sum(self.client_cpu.values()),
                                "busy": busy, "total": total}

    def cpu_between(self, a: str, b: str) -> dict[str, float]:
        x, y = self.marks[a], self.marks[b]
        return {k: y[k] - x[k] for k in x}

    def run(self) -> None:
        while not self._halt.is_set():
            self.poll()
            self._halt.wait(self.every)

    def hwm(self) -> int:
        return _status_kb(self.pid, "VmHWM") * 1024

    def stop(self) -> None:
        self._halt.set()


def cores_for(pin: bool) -> tuple[set[int] | None, set[int] | None]:
    """(server cores, client cores): the first allowed core for the server, the rest for the
    clients; (None, None) when not pinning or on one core."""
    cores = sorted(os.sched_getaffinity(0))
    if not pin or len(cores) < 2:
        return None, None
    return {cores[0]}, set(cores[1:])


def affinity(pid: int) -> str:
    try:
        return ",".join(map(str, sorted(os.sched_getaffinity(pid))))
    except OSError:
        return "?"


def start_server(port: int, env: dict, cores: set[int] | None = None) -> subprocess.Popen:
    log = open(Path(tempfile.mkdtemp(prefix="bench-load-")) / "server.log", "wb")
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    proc = subprocess.Popen([sys.executable, str(ROOT / "deploy" / "check.py"), "start",
                             "--port", str(port), "--address", "127.0.0.1"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=pin)
    proc.log_path = log.name  # type: ignore[attr-defined]
    return proc


def pinning(server: int, cores: set[int] | None) -> str:
    if not cores:
        return "pinning: none (--no-pin or one core): server and clients share the cores"
    kids = [int(x) for x in subprocess.run(["pgrep", "-P", str(os.getpid())],
                                           capture_output=True, text=True).stdout.split()
            if int(x) != server]
    return (f"pinning: server pid {server} on core(s) {affinity(server)}; this process on "
            f"{affinity(os.getpid())}"
            + (f", its children (the Playwright driver and Chromium) on "
               f"{', '.join(sorted({affinity(k) for k in kids}))}" if kids else ""))



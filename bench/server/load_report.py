"""The load benchmark's report (bench/server/load.py): percentiles of the visitors' times, idle
vs under load, the CPU seconds of each side, the server's memory, the targets."""

from __future__ import annotations

import os

from bench.harness import percentile

SERVER = "server: "  # kinds of server-side times (Chromium's websocket frames) in the times dicts


class CrossTalk(Exception):
    """A visitor saw another visitor's text, or not its own."""


def check_words(name: str, word: str | None, others: list[str], tokens: list[str]) -> None:
    """Raise :class:`CrossTalk` unless ``tokens`` (a visitor's head view) hold its own ``word``
    and none of the ``others``' words."""
    if word is None:
        return
    if word not in tokens:
        raise CrossTalk(f"visitor {name}: its word '{word}' is not in its head view "
                        f"({' '.join(tokens)[:120]})")
    foreign = [w for w in others if w in tokens]
    if foreign:
        raise CrossTalk(f"visitor {name} sees another visitor's word {foreign}")


def coverage(runs: list[tuple[float, float | None]], t0: float, t1: float) -> float:
    """The share of [t0, t1] during which one of ``runs`` ((start, end or None: still running))
    ran."""
    busy = 0.0
    for a, b in runs:
        b = t1 if b is None else b
        busy += max(0.0, min(b, t1) - max(a, t0))
    return busy / max(t1 - t0, 1e-9)


pct = percentile


def part(times: dict[str, list[float]], server: bool) -> dict[str, list[float]]:
    """The wall times (as the visitor sees them) or the server-side times, by kind."""
    if server:
        return {k[len(SERVER):]: v for k, v in times.items() if k.startswith(SERVER)}
    return {k: v for k, v in times.items() if not k.startswith(SERVER)}


def split(times: dict[str, list[float]]) -> tuple[list[float], list[float]]:
    times = part(times, False)
    first = times.get("first view", [])
    inter = [x for k, v in times.items() if k != "first view" for x in v]
    return first, inter


def table(idle: dict, loaded: dict, label: str, server: bool = False) -> float:
    """Rows of p50 / p95 idle vs ``label``; returns the interactions' p95 ratio."""
    idle, loaded = part(idle, server), part(loaded, server)
    print(f"{'':<22}{'idle n':>7}{'p50 s':>8}{'p95 s':>8}{label + ' n':>10}{'p50 s':>8}"
          f"{'p95 s':>8}{'p95 ratio':>10}")

    def row(name, a, b):
        r = pct(b, 95) / pct(a, 95) if a and b else float("nan")
        print(f"{name:<22}{len(a):>7}{pct(a, 50):>8.2f}{pct(a, 95):>8.2f}{len(b):>10}"
              f"{pct(b, 50):>8.2f}{pct(b, 95):>8.2f}{r:>10.2f}")
        return r

    f0, i0 = (idle.get("first view", []),
              [x for k, v in idle.items() if k != "first view" for x in v])
    f1, i1 = (loaded.get("first view", []),
              [x for k, v in loaded.items() if k != "first view" for x in v])
    row("time to first view", f0, f1)
    ratio = row("interactions (all)", i0, i1)
    for kind in sorted({k for k in list(idle) + list(loaded) if k != "first view"}):
        row(f"  {kind}", idle.get(kind, []), loaded.get(kind, []))
    return ratio


def cpu_line(phase: dict) -> str:
    c, wall = phase["cpu"], phase["wall"]
    cores = os.cpu_count() or 1
    other = c["busy"] - c["server"] - c["client"]
    return (f"CPU over the {wall:.0f} s ({wall * cores:.0f} core-s on {cores} cores, "
            f"{c['busy'] / max(wall * cores, 1e-9):.0%} busy): server {c['server']:.1f} s = its "
            f"own process {c['own']:.1f} s (of which the queue's job threads {c['job']:.1f} s) "
            f"+ its child processes (the fine-tune) {c['children']:.1f} s; client side "
            f"(Chromium, Playwright) {c['client']:.1f} s; other processes on the machine "
            f"{max(other, 0):.0f} s")


WALL = ("Wall: from the action to the result shown and the script idle, as the visitor sees it "
        "(Chromium's own work on this machine's cores included). Server side: from the first "
        "websocket frame the page sends to the last one it receives (Chromium's DevTools "
        "timestamps).")


def _tables(idle: dict, times: dict, label: str) -> tuple[float, float]:
    """The wall table and the server-side one; their interaction p95 ratios."""
    ratio = table(idle, times, label)
    print("server side:")
    return ratio, table(idle, times, label, server=True)


def _met(x: float) -> str:
    return "met" if x <= 2 else "NOT met"


def report(args, idle: dict, load: dict, control: dict | None, monitor) -> float:
    gb = 1e9
    f1, i1 = split(load["times"])
    f0, i0 = split(idle)
    print(f"\n{args.visitors} Chromium visitors under load, {args.rounds} rounds each, "
          f"think time {args.think:g} s (x0.5-1.5) before each interaction, client side at "
          f"niceness {args.client_nice}: {len(i1)} interactions and {len(f1)} first views "
          f"measured under load; {len(i0)} and {len(f0)} for the idle visitor")
    print(WALL)
    if control is not None:
        print(f"\ncontrol: the same visitors, no fine-tune (load phase {control['wall']:.0f} s)")
        _tables(idle, control["times"], "ctrl")
        print(cpu_line(control))
    print(f"\nunder load: the visitors while a fine-tune runs (load phase {load['wall']:.0f} s)")
    ratio, s_ratio = _tables(idle, load["times"], "load")
    print(cpu_line(load))
    tr = load["trainer"]
    done = [b - a for a, b in tr.runs if b is not None]
    nice = ", ".join(str(n) for n in sorted(monitor.job_nice | monitor.child_nice)) or "none seen"
    print(f"fine-tunes (demo defaults, through the queue, pressed by a Chromium client): "
          f"{len(tr.runs)} started, {len(done)} finished "
          f"({', '.join(f'{d:.0f} s' for d in done) or 'none'}); one ran during "
          f"{load['coverage']:.0%} of the load phase"
          f"{' (still running at its end)' if load['still_running'] else ''}; niceness of its "
          f"threads / child process: {nice}" + (f"; trainer error: {tr.error}" if tr.error else ""))
    peak = max(monitor.peak.values())
    print(f"\nserver RSS (VmRSS of the server and its children, peak): after warm-up, idle with "
          f"the default model and the example loaded {monitor.peak.get('idle', 0) / gb:.2f} GB; "
          f"one visitor {monitor.peak.get('baseline', 0) / gb:.2f} GB; "
          + (f"control {monitor.peak.get('control', 0) / gb:.2f} GB; " if control else "")
          + f"under load with the fine-tune {monitor.peak.get('load', 0) / gb:.2f} GB; "
          f"whole run {peak / gb:.2f} GB (kernel VmHWM {monitor.hwm() / gb:.2f} GB)")
    print(f"targets: peak RSS {peak / gb:.2f} GB <= 2.5 GB: "
          f"{'met' if peak <= 2.5e9 else 'NOT met'}; interaction p95 under load / idle "
          f"{ratio:.2f} (wall), {s_ratio:.2f} (server side) <= 2: {_met(ratio)} (wall), "
          f"{_met(s_ratio)} (server side)")
    return ratio


def per_action(idle: dict, load: dict, control: dict | None, monitor) -> None:
    """The server's CPU seconds per visitor action (first views and interactions) per phase:
    its own process's, the queue's job threads and its child processes (the fine-tune) left
    out."""
    def line(name: str, times: dict, cpu: dict) -> str:
        n = sum(len(v) for v in part(times, False).values())
        own = cpu["own"] - cpu["job"]
        return (f"{name} {own / max(n, 1):.2f} CPU-s per action ({own:.1f} s over {n} "
                "actions)")

    rows = [line("one idle visitor", idle, monitor.cpu_between("baseline start", "baseline end"))]
    if control is not None:
        rows.append(line("control", control["times"], control["cpu"]))
    rows.append(line("under load", load["times"], load["cpu"]))
    print("server CPU per visitor action (from /proc; the job threads and the fine-tune's child "
          "process left out): "
          + "; ".join(rows))



#!/usr/bin/env python3
"""trace-phases.py: where an open-loop acquisition's time goes, from a Go execution trace.

Issue 44's per-phase breakdown. The trace is BenchmarkOpenLoopLight's (workloads), written with
LOCKBENCH_TRACE: each attempt's intended start is a log event of the open loop ("slot
lag_ns=N", after the worker's wait), each Lock a region "lock". Run one sub-benchmark at a time:

    go test -c -o /tmp/workloads.test ./workloads
    LOCKBENCH_TRACE=/tmp/t.out /tmp/workloads.test -test.run '^$' \\
        -test.bench 'OpenLoopLight/lockcore/rate=250' -test.benchtime 2000x
    go tool trace -d=parsed /tmp/t.out | scripts/trace-phases.py

For every acquisition it follows the worker goroutine W and whoever wakes it, and splits the
time from the intended start to the end of Lock into phases (trace clock, nanoseconds):

  wake      intended start -> W runnable (the pacer's timerfd fired and the poller readied W;
            negative: before the slot, the spin covers the rest)
  sched     W runnable -> W running
  spin      W running -> the log event (the wait's spin, to the slot)
  to-lock   the log event -> Lock begins (the open loop's bookkeeping)
  to-write  Lock begins -> the first system call after it (the request's write; lockcore:
            the batcher and rueidis's writer goroutine in between)
  server    that write -> the reply's reader runnable (the network, Redis, and the client's
            poller waking up: an idle CPU's wake-up is here)
  reader    the reader runnable -> running -> W made runnable (lockcore: rueidis's reader
            goroutine reads the reply and hands it over; naive: W reads it itself, 0)
  resched   W runnable -> W running
  finish    W running -> Lock ends

It prints each phase's p50, p90 and p99 over all acquisitions, then the mean of each phase over
the slowest 1% and 10% (by intended start to Lock's end) beside the median acquisition's: the
phases the tail's time is in. Standard library only; reads the text of go tool trace -d=parsed.
"""

import re
import statistics
import sys

EVENT = re.compile(r'^M=(-?\d+) P=(-?\d+) G=(-?\d+) (\w+) Time=(\d+)(.*)$')
GSTATE = re.compile(r' GoID=(\d+) (\w+)->(\w+) Reason="(.*)"')
REGION = re.compile(r' Task=\d+ Type="(\w+)"')
SLOT = re.compile(r'Category="lockbench" Message="slot lag_ns=(-?\d+)"')

PHASES = ["wake", "sched", "spin", "to-lock", "to-write", "server", "reader", "resched", "finish"]


class Worker:
    """What one goroutine did lately, and the acquisition it is in."""

    def __init__(self):
        self.wake = self.run = None  # last Waiting->Runnable, Runnable->Running
        self.acq = None


def main():
    gs = {}  # goroutine id -> Worker
    last_runnable = {}  # goroutine id -> time of its last Waiting->Runnable
    last_running = {}  # goroutine id -> time of its last Runnable->Running
    first_syscall_after = []  # acquisitions waiting for the next system call
    done = []
    for line in sys.stdin:
        m = EVENT.match(line)
        if not m:
            continue
        g, kind, t, rest = int(m.group(3)), m.group(4), int(m.group(5)), m.group(6)
        if kind == "StateTransition":
            s = GSTATE.match(rest)
            if not s:
                continue
            gid, old, new = int(s.group(1)), s.group(2), s.group(3)
            w = gs.setdefault(gid, Worker())
            if new == "Syscall":
                for a in first_syscall_after:
                    a["write"] = t
                first_syscall_after.clear()
            if old == "Waiting" and new == "Runnable":
                last_runnable[gid] = t
                w.wake = t
                a = w.acq
                if a is not None and "lock" in a:
                    a["ready"], a["waker"] = t, g
            elif old == "Runnable" and new == "Running":
                last_running[gid] = t
                w.run = t
                a = w.acq
                if a is not None and "ready" in a:
                    a["wrun"] = t
        elif kind == "Log":
            s = SLOT.search(rest)
            if s:
                w = gs.setdefault(g, Worker())
                lag = int(s.group(1))
                w.acq = {"intended": t - lag, "slot": t, "wake": w.wake, "run": w.run}
        elif kind in ("RegionBegin", "RegionEnd"):
            r = REGION.match(rest)
            if not r or r.group(1) != "lock":
                continue
            w = gs.setdefault(g, Worker())
            a = w.acq
            if a is None:
                continue
            if kind == "RegionBegin":
                a["lock"] = t
                first_syscall_after.append(a)
            else:
                a["end"] = t
                if "ready" in a:
                    waker = a["waker"]
                    if waker > 0 and waker != g:
                        a["reply"] = last_runnable.get(waker, a["ready"])
                        a["rrun"] = last_running.get(waker, a["ready"])
                    else:
                        a["reply"] = a["rrun"] = a["ready"]
                done.append(a)
                w.acq = None
    rows = []
    for a in done:
        if not all(k in a and a[k] is not None for k in ("wake", "run", "lock", "write", "ready", "wrun", "end")):
            continue
        if not (a["lock"] <= a["write"] <= a["end"] and a["write"] <= a["reply"] <= a["rrun"] <= a["ready"] <= a["wrun"] <= a["end"]):
            continue  # the write or the reply was another attempt's: overlapping acquisitions
        rows.append({
            "total": a["end"] - a["intended"],
            "wake": a["wake"] - a["intended"],
            "sched": a["run"] - a["wake"],
            "spin": a["slot"] - a["run"],
            "to-lock": a["lock"] - a["slot"],
            "to-write": a["write"] - a["lock"],
            "server": a["reply"] - a["write"],
            "reader": a["ready"] - a["reply"],
            "resched": a["wrun"] - a["ready"],
            "finish": a["end"] - a["wrun"],
        })
    print(f"{len(done)} acquisitions traced, {len(rows)} followed end to end (the rest overlapped another's events)")
    if not rows:
        return 1
    rows.sort(key=lambda r: r["total"])

    def pct(vals, p):
        vals = sorted(vals)
        return vals[min(len(vals) - 1, int(p / 100 * len(vals)))]

    us = lambda ns: f"{ns / 1000:8.1f}"
    print(f"{'phase (µs)':10} {'p50':>8} {'p90':>8} {'p99':>8}   {'median acq':>10} {'slowest 10%':>11} {'slowest 1%':>10}")
    n = len(rows)
    slow10 = rows[int(0.9 * n):]
    slow1 = rows[int(0.99 * n):] or rows[-1:]
    med = rows[n // 2]
    for ph in ["total"] + PHASES:
        vals = [r[ph] for r in rows]
        print(f"{ph:10} {us(pct(vals, 50))} {us(pct(vals, 90))} {us(pct(vals, 99))}   {us(med[ph]):>10} "
              f"{us(statistics.mean(r[ph] for r in slow10)):>11} {us(statistics.mean(r[ph] for r in slow1)):>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

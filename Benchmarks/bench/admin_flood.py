"""Step `admin-flood` of the benchmark suite: admin API call latency while the admin listener
is flooded.

An attacker holds 8 connections from each of 127.0.1.1–127.0.1.8 (the whole 127/8 reaches the loopback interface
on Linux; each socket is bound to its source address), reopening each one the moment the server closes it: idle
connections in one run, connections trickling a body under the limit (`POST` with `Content-Length: 200000`, one
byte every 200 ms) in the other. Meanwhile an admin calls `GET /api/v1/me` with a bearer token from 127.0.0.1,
`admin_flood_calls` times, each over a new connection; the same calls without a flood come first, for comparison.
Target: every call succeeds within 1 s.
"""

import http.client
import os
import select
import socket
import threading
import time

from .common import StepFailed, free_port, latency_summary, log

FLOOD_SOURCES = [f"127.0.1.{n}" for n in range(1, 9)]
FLOOD_PER_SOURCE = 8
TRICKLE_HEAD = (b"POST /api/v1/customers HTTP/1.1\r\nHost: admin\r\nContent-Type: application/json\r\n"
                b"Content-Length: 200000\r\n\r\n")
TARGET_SECONDS = 1.0


class Flood:
    """The attacker: a thread that keeps FLOOD_PER_SOURCE connections open from each source, reopening closed ones
    at once, until stopped (or `lifetime` seconds)."""

    def __init__(self, port, mode, lifetime=600):
        self.port, self.mode, self.lifetime = port, mode, lifetime
        self.reopened = 0
        self.open = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def connect(self, source):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(1)
        try:
            sock.bind((source, 0))
            sock.connect(("127.0.0.1", self.port))
            if self.mode == "trickling":
                sock.sendall(TRICKLE_HEAD)
            sock.setblocking(False)
            return sock
        except OSError:
            sock.close()
            return None

    def run(self):
        slots = [[source, None] for source in FLOOD_SOURCES for _ in range(FLOOD_PER_SOURCE)]
        deadline = time.monotonic() + self.lifetime
        last_trickle = 0.0
        try:
            while not self.stopping.is_set() and time.monotonic() < deadline:
                for slot in slots:
                    if slot[1] is None:
                        slot[1] = self.connect(slot[0])
                open_sockets = [slot[1] for slot in slots if slot[1] is not None]
                self.open = len(open_sockets)
                if self.mode == "trickling" and time.monotonic() - last_trickle > 0.2:
                    last_trickle = time.monotonic()
                    for sock in open_sockets:
                        try:
                            sock.send(b"0")
                        except OSError:
                            pass
                if not open_sockets:
                    time.sleep(0.05)
                    continue
                readable, _, _ = select.select(open_sockets, [], [], 0.05)
                for slot in slots:
                    if slot[1] is not None and slot[1] in readable:
                        try:
                            data = slot[1].recv(4096)
                        except OSError:
                            data = b""
                        if not data:
                            slot[1].close()
                            slot[1] = None
                            self.reopened += 1
        finally:
            for slot in slots:
                if slot[1] is not None:
                    slot[1].close()

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=30)


def admin_calls(port, token, count):
    """`count` calls of GET /api/v1/me from 127.0.0.1, each on a new connection: (latencies of the successful ones
    in seconds, failures as text)."""
    latencies, failures = [], []
    for index in range(count):
        began = time.monotonic()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.0.0.1", 0))
        try:
            connection.request("GET", "/api/v1/me", headers={"Authorization": f"Bearer {token}", "Connection": "close"})
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                latencies.append(time.monotonic() - began)
            else:
                failures.append(f"call {index}: {response.status}")
        except (OSError, http.client.HTTPException) as error:
            failures.append(f"call {index}: {error!r}")
        finally:
            connection.close()
    return latencies, failures


def step(suite):
    """Runs the step on `suite` (the suite's harness) and stores its results under steps["admin-flood"]."""
    calls = suite.sizes["admin_flood_calls"]
    directory = suite.init_data("admin-flood", "p256")
    database = os.path.join(directory, "pinset.sqlite")

    def cli(*args):
        return suite.run([suite.pinset, *args, "--database", database], timeout=120, what=f"pinset {args[0]} {args[1]}").stdout

    cli("customer", "add", "acme")
    cli("admin", "add", "alice", "--role", "viewer:acme")
    token = cli("admin", "token", "alice", "--label", "bench").strip()
    api_port = free_port()
    suite.start_pinset(directory, name="pinset-admin-flood", extra={"api": {"host": "127.0.0.1", "port": api_port}})

    runs = {}
    for mode in ("none", "idle", "trickling"):
        flood = None
        if mode != "none":
            flood = Flood(api_port, mode)
            flood.start()
            deadline = time.monotonic() + 30
            while flood.open < len(FLOOD_SOURCES) * FLOOD_PER_SOURCE - 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            if flood.open < len(FLOOD_SOURCES) * FLOOD_PER_SOURCE - 4:
                flood.stop()
                raise StepFailed(f"the {mode} flood could not hold its connections open ({flood.open} open)")
            time.sleep(0.5)
        try:
            latencies, failures = admin_calls(api_port, token, calls)
        finally:
            if flood is not None:
                flood.stop()
        summary = latency_summary(latencies) if latencies else {"median": None, "p99": None, "max": None, "all": []}
        runs[mode] = dict(summary, calls=calls, failed=len(failures), failures=failures[:5],
                          floodReopened=flood.reopened if flood else 0)
        log(f"admin-flood ({mode}): {calls - len(failures)} of {calls} calls succeeded"
            + (f", median {summary['median'] * 1000:.1f} ms, p99 {summary['p99'] * 1000:.1f} ms" if latencies else "")
            + (f"; the flood's connections were closed and reopened {flood.reopened} times" if flood else ""))
    suite.results["steps"]["admin-flood"] = {
        "sources": len(FLOOD_SOURCES), "perSource": FLOOD_PER_SOURCE, "targetSeconds": TARGET_SECONDS, "runs": runs,
    }


def render(result, fmt_s, verdict):
    """The step's section of BENCHMARKS.md's results, as lines."""
    names = {"none": "no flood", "idle": "idle connections", "trickling": "bodies trickled under the limit"}
    lines = [
        "### 10. Admin calls while the admin listener is flooded",
        "",
        f"{result['perSource']} connections from each of {result['sources']} addresses (127.0.1.1–{result['sources']}), "
        "each reopened as soon as the server closes it, idle or trickling a body under the limit; an admin calls "
        "`GET /api/v1/me` with a bearer token from 127.0.0.1, each call on a new connection. "
        f"Target: every call succeeds within {result['targetSeconds']:g} s.",
        "",
        "| flood | calls | failed | median | p99 | slowest | flood connections closed by the server | target |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for mode, name in names.items():
        r = result["runs"][mode]
        met = "" if mode == "none" else verdict(r["failed"] == 0 and r["max"] is not None and r["max"] < result["targetSeconds"])
        lines.append(f"| {name} | {r['calls']} | {r['failed']} | {fmt_s(r['median'])} | {fmt_s(r['p99'])} | {fmt_s(r['max'])} | "
                     f"{r['floodReopened']:,} | {met} |")
    lines.append("")
    return lines


class AdminFloodStep:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_admin_flood(self):
        """Admin API call latency while 8 addresses hold every admin listener slot they may."""
        step(self)

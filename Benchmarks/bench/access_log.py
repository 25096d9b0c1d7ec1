"""Step `access-log` of the benchmark suite: what logging every request costs, Pinset against
nginx, as operators run them.

Four servers serve the same signed bundle from the same machine: Pinset with its access log off and on (on: written
to a file, `accessLogFile`), and nginx (two workers) with `access_log off` and with `access_log FILE combined
buffer=64k`. wrk (two threads) fetches the bundle over keep-alive connections, as a 200 and as a 304
(`If-None-Match` with each server's own ETag), at 8 and at 64 connections. Each cell runs `access_log_rounds` times,
the servers in a different order each round; the median round is reported, with the server's CPU time per request
(user + system from /proc over the run, all nginx workers summed), which is steadier than requests/s on 2 cores
shared with wrk.

wrk's connections all come from 127.0.0.1, so Pinset's per-address limit is raised above them: otherwise the run
measures the limit (half the connections refused), not the server.

Targets (issue: access log at nginx's cost): with the log on, Pinset keeps at least 90 % of its keep-alive
throughput with the log off, and with both logging it stays at or above 1.1x nginx's keep-alive requests/s and
1.0x nginx's 304s.
"""

import os
import statistics
import time

from .common import StepFailed, children, http_get, log, parse_wrk, proc_cpu_seconds

CONNECTIONS = (8, 64)
MODES = ("keepalive", "notModified")
SERVERS = ("pinset-off", "pinset-on", "nginx-off", "nginx-on")
def wrk(suite, port, path, connections, seconds, headers=()):
    argv = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "5s"]
    for header in headers:
        argv += ["-H", header]
    argv.append(f"http://127.0.0.1:{port}{path}")
    result = parse_wrk(suite.run(argv, timeout=seconds + 60, what="wrk").stdout)
    if result.get("requests", 0) == 0 or result.get("non2xx", 0) or result.get("socketErrors", 0):
        raise StepFailed(f"wrk against port {port}: {result}")
    return result


def step(suite):
    """Runs the step on `suite` (the suite's harness) and stores its results under steps["access-log"]."""
    sizes = suite.sizes
    directory = suite.init_data("access-log", "p256")
    suite.populate(directory, sizes["serving_customers"])
    www = os.path.join(suite.temp, "access-log-www")
    suite.run([suite.pinset, "sign", "--out", www, "--data-dir", directory], timeout=300, what="pinset sign")
    path = "/customer-00001.json.signed"
    pinset_log = os.path.join(suite.temp, "pinset-access.log")
    nginx_log = os.path.join(suite.temp, "nginx-access.log")
    servers = {
        "pinset-off": suite.start_pinset(directory, name="pinset-log-off", per_address_limit=False),
        "pinset-on": suite.start_pinset(directory, access_log=True, name="pinset-log-on", per_address_limit=False,
                                        extra={"accessLogFile": pinset_log}),
        "nginx-off": suite.start_nginx(www, name="nginx-log-off"),
        "nginx-on": suite.start_nginx(www, name="nginx-log-on", access_log_path=nginx_log),
    }
    etags = {}
    for name, process in servers.items():
        status, headers, _ = http_get(process.port, path)
        etag = {k.lower(): v for k, v in headers.items()}.get("etag")
        if status != 200 or not etag or http_get(process.port, path, headers={"If-None-Match": etag})[0] != 304:
            raise StepFailed(f"{name} does not answer 200, then 304 to its own ETag")
        etags[name] = etag
    seconds = sizes["access_log_seconds"]
    if sizes["wrk_warmup_seconds"]:
        for process in servers.values():
            wrk(suite, process.port, path, 64, sizes["wrk_warmup_seconds"])
    runs = {(c, m, s): [] for c in CONNECTIONS for m in MODES for s in SERVERS}
    for round_number in range(sizes["access_log_rounds"]):
        # A different order each round, so that no server always runs right after the same one.
        order = SERVERS[round_number % len(SERVERS):] + SERVERS[:round_number % len(SERVERS)]
        for connections in CONNECTIONS:
            for mode in MODES:
                for name in order:
                    process = servers[name]
                    pids = [process.pid] + (children(process.pid) if name.startswith("nginx") else [])
                    cpu_before, wall_before = proc_cpu_seconds(pids), time.monotonic()
                    headers = [f"If-None-Match: {etags[name]}"] if mode == "notModified" else ()
                    result = wrk(suite, process.port, path, connections, seconds, headers)
                    cpu = proc_cpu_seconds(pids) - cpu_before
                    result["serverCpuMicrosecondsPerRequest"] = 1e6 * cpu / max(result["requests"], 1)
                    result["wallSeconds"] = time.monotonic() - wall_before
                    runs[(connections, mode, name)].append(result)
                    log(f"access-log round {round_number + 1} c{connections} {mode} {name}: {result['requestsPerSecond']:.0f} req/s, "
                        f"{result['serverCpuMicrosecondsPerRequest']:.1f} us CPU/request")
    requests_logged = sum(r["requests"] for (c, m, s), results in runs.items() if s == "pinset-on" for r in results)
    for name, process in servers.items():
        code = suite.stop(process)
        if name.startswith("pinset") and code != 0:
            raise StepFailed(f"{name} exited with {code} after SIGTERM")
    # Every request of the log-on server is in its file once it has stopped (the warm-up and ETag checks besides).
    with open(pinset_log, "rb") as f:
        lines = sum(1 for _ in f)
    if lines < requests_logged:
        raise StepFailed(f"the access log holds {lines} lines for {requests_logged} requests")

    cells = {}
    for (connections, mode, name), results in runs.items():
        chosen = sorted(results, key=lambda r: r["requestsPerSecond"])[len(results) // 2]
        cells[f"c{connections}-{mode}-{name}"] = {
            "requestsPerSecond": chosen["requestsPerSecond"], "serverCpuMicrosecondsPerRequest": chosen["serverCpuMicrosecondsPerRequest"],
            "p99Microseconds": chosen.get("p99Microseconds"), "allRequestsPerSecond": [r["requestsPerSecond"] for r in results],
        }

    def ratio(connections, mode, numerator, denominator):
        """The median over rounds of one round's ratio: runs of a round share the machine's background load."""
        pairs = zip(runs[(connections, mode, numerator)], runs[(connections, mode, denominator)])
        return statistics.median(n["requestsPerSecond"] / d["requestsPerSecond"] for n, d in pairs)

    ratios = {}
    for connections in CONNECTIONS:
        for mode in MODES:
            ratios[f"c{connections}-{mode}"] = {
                "pinsetOnOverOff": ratio(connections, mode, "pinset-on", "pinset-off"),
                "pinsetOverNginxBothLogging": ratio(connections, mode, "pinset-on", "nginx-on"),
                "pinsetOverNginxNeitherLogging": ratio(connections, mode, "pinset-off", "nginx-off"),
            }
    suite.results["steps"]["access-log"] = {
        "seconds": seconds, "rounds": sizes["access_log_rounds"], "connections": list(CONNECTIONS), "cells": cells, "ratios": ratios,
        "pinsetLogLines": lines, "pinsetLogBytes": os.path.getsize(pinset_log),
        "nginxLogBytes": os.path.getsize(nginx_log) if os.path.exists(nginx_log) else 0,
    }


def render(result, verdict):
    """The step's section of BENCHMARKS.md's results, as lines."""
    names = {"pinset-off": "Pinset, log off", "pinset-on": "Pinset, log on", "nginx-off": "nginx, log off", "nginx-on": "nginx, log on"}
    lines = [
        "### Access log on and off, against nginx",
        "",
        f"The same bundle from Pinset and nginx (2 workers), each with its access log off and on (Pinset: `accessLogFile`; "
        f"nginx: `combined buffer=64k`), wrk -t2 at {' and '.join(str(c) for c in result['connections'])} keep-alive "
        f"connections, {result['seconds']} s runs, median of {result['rounds']} rounds; server CPU per request from /proc. "
        "Pinset's per-address limit is raised above wrk's connections, which all come from 127.0.0.1.",
        "",
        "| connections | response | server | requests/s | server CPU per request | p99 |",
        "| ---: | --- | --- | ---: | ---: | ---: |",
    ]
    for connections in result["connections"]:
        for mode in MODES:
            for name in SERVERS:
                cell = result["cells"][f"c{connections}-{mode}-{name}"]
                p99 = cell.get("p99Microseconds")
                lines.append(f"| {connections} | {'200' if mode == 'keepalive' else '304'} | {names[name]} | {cell['requestsPerSecond']:,.0f} | "
                             f"{cell['serverCpuMicrosecondsPerRequest']:.1f} µs | {'' if p99 is None else f'{p99:,.0f} µs'} |")
    lines += ["", "| connections | response | log on ÷ off (Pinset) | Pinset ÷ nginx, both logging | Pinset ÷ nginx, neither logging | target |",
              "| ---: | --- | ---: | ---: | ---: | --- |"]
    for connections in result["connections"]:
        for mode in MODES:
            r = result["ratios"][f"c{connections}-{mode}"]
            if mode == "keepalive":
                target = f"on ÷ off ≥ 0.90 {verdict(r['pinsetOnOverOff'] >= 0.9)}; ≥ 1.1× nginx {verdict(r['pinsetOverNginxBothLogging'] >= 1.1)}"
            else:
                target = f"≥ 1.0× nginx {verdict(r['pinsetOverNginxBothLogging'] >= 1.0)}"
            lines.append(f"| {connections} | {'200' if mode == 'keepalive' else '304'} | {r['pinsetOnOverOff']:.2f} | "
                         f"{r['pinsetOverNginxBothLogging']:.2f} | {r['pinsetOverNginxNeitherLogging']:.2f} | {target} |")
    lines += ["", f"Pinset's log held {result['pinsetLogLines']:,} lines ({result['pinsetLogBytes']:,} bytes) after its stop, one per request answered.", ""]
    return lines


class AccessLogStep:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_access_log(self):
        """Requests/s and server CPU per request with the access log off and on, Pinset against nginx."""
        step(self)

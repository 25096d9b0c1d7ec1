#!/usr/bin/env python3
"""Heap allocations (and CPU time) per request of `pinset serve`, counted over a fixed number of requests.

Allocation counts do not depend on the machine's load, unlike requests/s, so they compare builds on a busy shared
machine. For each mode the server starts under an LD_PRELOAD library (built here from `alloccount.c`) that counts
every malloc, calloc, realloc and aligned allocation of the process and writes the totals to stderr on SIGUSR2.
One keep-alive connection (Benchmarks/requests.py) sends a warm-up request, the totals are read, the same connection
sends COUNT requests reading every response, and the totals are read again. CPU time (utime + stime from /proc) over
the same requests is printed beside it; it moves with the load of the machine.

    Benchmarks/per_request.py --pinset .build-perf/release/pinset --data-dir DIR [--count 20000]

Modes: `200` (keep-alive, plain GET), `304` (the same with the bundle's ETag in If-None-Match), and `features`
(the 200 with a Pinset-Version field for uptake counting, host monitoring and the reports listener configured).
Metrics, uptake counting and the per-address limit are on in every mode, as by default; the access log is off as in
the serving step of Benchmarks/run. The change poll runs once a minute here so that the count holds requests only.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

SHIM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
static atomic_ulong count, bytes;
static void note(size_t n) {
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, n, memory_order_relaxed);
}
void *malloc(size_t n) { note(n); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(a * b); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(n); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t a, size_t n) { note(n); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    void *p = memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
static void report(int sig) {
    (void)sig;
    char line[96];
    int len = snprintf(line, sizeof line, "ALLOCCOUNT %lu %lu\n", (unsigned long)atomic_load(&count),
                       (unsigned long)atomic_load(&bytes));
    write(2, line, len);
}
__attribute__((constructor)) static void install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = report;
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &action, NULL);
}
"""


def build_shim(temp):
    source = os.path.join(temp, "alloccount.c")
    library = os.path.join(temp, "alloccount.so")
    with open(source, "w") as f:
        f.write(SHIM)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", library, source], check=True)
    return library


def start_server(options, temp, mode, shim):
    config = {"host": "127.0.0.1", "port": 0, "dataDirectory": options.data_dir, "accessLog": False,
              "logLevel": "info", "logFormat": "text", "changePollIntervalSeconds": 60}
    if mode == "features":
        # Hosts resolve to a closed loopback port: the monitor's checks fail at once and stay out of the count.
        config["monitoring"] = {"intervalSeconds": 3600, "timeoutSeconds": 1, "connectTo": {"*": "127.0.0.1:9"}}
        config["reports"] = {"host": "127.0.0.1", "port": 0, "flushIntervalSeconds": 60}
    path = os.path.join(temp, f"config-{mode}.json")
    with open(path, "w") as f:
        json.dump(config, f)
    log_path = os.path.join(temp, f"server-{mode}.log")
    out = open(log_path, "w+")
    process = subprocess.Popen([options.pinset, "serve", "--config", path], stdout=out, stderr=subprocess.STDOUT,
                               env=dict(os.environ, LD_PRELOAD=shim))
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        out.seek(0)
        match = re.search(r"pinset listening on 127\.0\.0\.1:(\d+)", out.read())
        if match:
            return process, int(match.group(1)), out
        if process.poll() is not None:
            out.seek(0)
            raise SystemExit(f"pinset serve exited:\n{out.read()[-3000:]}")
        time.sleep(0.05)
    raise SystemExit("pinset serve did not start")


def totals(process, out):
    """The allocation totals the server writes on SIGUSR2: (count, bytes)."""
    out.seek(0)
    before = len(re.findall(r"ALLOCCOUNT", out.read()))
    process.send_signal(signal.SIGUSR2)
    for _ in range(500):
        out.seek(0)
        found = re.findall(r"ALLOCCOUNT (\d+) (\d+)", out.read())
        if len(found) > before:
            return int(found[-1][0]), int(found[-1][1])
        time.sleep(0.01)
    raise SystemExit("no allocation totals")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(options, mode, temp, shim):
    server, port, out = start_server(options, temp, mode, shim)
    try:
        argv = [sys.executable, os.path.join(HERE, "requests.py"), "--port", str(port), "--count", str(options.count),
                "--path", options.path]
        if mode == "304":
            argv.append("--if-none-match")
        if mode == "features":
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}{options.path}").read()
            match = re.search(rb'"version"\s*:\s*(\d+)', body)
            argv += ["--header", f"Pinset-Version: {match.group(1).decode() if match else 1}"]
        client = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if client.stdout.readline().strip() != "ready":
            raise SystemExit("client failed")
        if mode == "features":
            # The monitor's first pass (every check refused) ends before the count starts.
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                status = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/status").read())
                if status["monitoring"].get("passes", 0) >= 1:
                    break
                time.sleep(0.5)
            time.sleep(1)
        first = totals(server, out)
        cpu = cpu_seconds(server.pid)
        client.stdin.write("\n")
        client.stdin.flush()
        if client.wait() != 0:
            raise SystemExit("client failed")
        cpu = cpu_seconds(server.pid) - cpu
        last = totals(server, out)
        return ((last[0] - first[0]) / options.count, (last[1] - first[1]) / options.count, cpu / options.count * 1e6)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pinset", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--path", default="/customer-00001.json.signed")
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--modes", nargs="+", default=["200", "304", "features"])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        shim = build_shim(temp)
        for mode in options.modes:
            for _ in range(options.rounds):
                allocations, allocated, cpu = measure(options, mode, temp, shim)
                print(f"{mode}: {allocations:.2f} allocations ({allocated:,.0f} bytes) per request; "
                      f"CPU {cpu:.1f} µs per request", flush=True)


if __name__ == "__main__":
    main()

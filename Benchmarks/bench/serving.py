"""Step `serving`: Pinset against nginx on the same signed bundle (keep-alive, `Connection: close`, 304), what
each serving feature costs, and a good client's latency while thousands of connections flood the server."""

import http.client
import json
import os
import socket
import statistics
import time

from .common import HoldingListener, StepFailed, WRK_CONNECTIONS, WRK_THREADS, children, http_get, log, proc_cpu_seconds, proc_status


class ServingSteps:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    # ----- steps ---------------------------------------------------------------------------------------

    def step_serving(self):
        sizes = self.sizes
        directory = self.init_data("serving", "p256")
        self.populate(directory, sizes["serving_customers"])
        www = os.path.join(self.temp, "www")
        self.run([self.pinset, "sign", "--out", www, "--data-dir", directory], timeout=300, what="pinset sign")
        path = "/customer-00001.json.signed"
        with open(www + path, "rb") as f:
            file_bytes = f.read()

        pinset = self.start_pinset(directory, per_address_limit=False)
        # The same server on its portable transport (Dispatch sources; the default on macOS), measured beside the
        # default epoll one in every round.
        pinset_dispatch = self.start_pinset(directory, name="pinset-dispatch", per_address_limit=False,
                                            extra={"transport": "dispatch"})
        nginx = self.start_nginx(www)
        status_p, headers_p, body_p = http_get(pinset.port, path)
        status_n, headers_n, body_n = http_get(nginx.port, path)
        if status_p != 200 or status_n != 200:
            raise StepFailed(f"bundle fetch answered {status_p} (pinset) and {status_n} (nginx)")
        if body_n != file_bytes:
            raise StepFailed("nginx does not serve the bytes pinset sign wrote")
        if body_p[:1] != b"\x30" or abs(len(body_p) - len(body_n)) > 8:
            raise StepFailed(f"pinset's bundle ({len(body_p)} bytes) does not look like the signed file ({len(body_n)} bytes)")
        served = {
            "path": path, "pinsetBodyBytes": len(body_p), "nginxBodyBytes": len(body_n),
            "pinsetHeaders": {k: v for k, v in headers_p.items() if k.lower() != "date"},
            "nginxHeaders": {k: v for k, v in headers_n.items() if k.lower() not in ("date", "last-modified", "etag")},
        }
        # The Dispatch floor: accept, one read, one send, close, nothing else, with Pinset's body size. It runs in
        # every `Connection: close` round beside Pinset and nginx, so the three are compared under the same load.
        floor = self.start_dispatch_floor(len(body_p))
        targets = {"pinset": pinset, "pinsetDispatch": pinset_dispatch, "nginx": nginx}
        if sizes["wrk_warmup_seconds"]:
            for process in [*targets.values(), floor]:
                self.wrk(process.port, path, seconds=sizes["wrk_warmup_seconds"])
        # Conditional requests answered 304 (wrk frames responses by Content-Length, so a 304 that announced the
        # 200's length would complete no request at all), each server with its own ETag.
        etags = {}
        for target, process in targets.items():
            etag = {k.lower(): v for k, v in http_get(process.port, path)[1].items()}.get("etag")
            status, _, _ = http_get(process.port, path, headers={"If-None-Match": etag})
            if status != 304:
                raise StepFailed(f"{target} answered {status} to If-None-Match with its own ETag")
            etags[target] = etag
        modes = ("keepalive", "close", "notModified")
        runs = {f"{t}-{m}": [] for t in targets for m in modes}
        runs["floor-close"] = []
        for round_number in range(sizes["wrk_rounds"]):
            for mode in modes:
                round_targets = dict(targets, floor=floor) if mode == "close" else targets
                for target, process in round_targets.items():
                    pids = [process.pid] + (children(process.pid) if target == "nginx" else [])
                    cpu_before, wall_before = proc_cpu_seconds(pids), time.monotonic()
                    headers = [f"If-None-Match: {etags[target]}"] if mode == "notModified" else ()
                    result = self.wrk(process.port, path, close=(mode == "close"), headers=headers)
                    cpu = proc_cpu_seconds(pids) - cpu_before
                    result["serverCpuPercent"] = 100.0 * cpu / (time.monotonic() - wall_before)
                    result["serverCpuMicrosecondsPerRequest"] = 1e6 * cpu / max(result["requests"], 1)
                    runs[f"{target}-{mode}"].append(result)
                    log(f"round {round_number + 1} {target} {mode}: {result['requestsPerSecond']:.0f} req/s, "
                        f"p50 {result.get('p50Microseconds', 0):.0f} us, p99 {result.get('p99Microseconds', 0):.0f} us, "
                        f"server CPU {result['serverCpuMicrosecondsPerRequest']:.1f} us/request")
        close_profile = self.profile_close(path, {"pinset": pinset, "floor": floor})
        self.stop(floor)
        memory = proc_status(pinset.pid)
        nginx_memory = {"VmHWM": 0, "VmRSS": 0}
        for pid in [nginx.pid] + children(nginx.pid):
            for key, value in proc_status(pid).items():
                nginx_memory[key] += value
        self.stop(nginx)
        for process in (pinset_dispatch, pinset):
            code = self.stop(process)
            if code != 0:
                raise StepFailed(f"pinset serve exited with {code} after SIGTERM:\n{self.tail(process.stderr_path)}")

        summary = {}
        for key, results in runs.items():
            chosen = sorted(results, key=lambda r: r["requestsPerSecond"])[len(results) // 2]
            summary[key] = dict(chosen, allRequestsPerSecond=[r["requestsPerSecond"] for r in results])
        for mode in ("keepalive", "close"):
            summary[f"ratio-{mode}"] = summary[f"pinset-{mode}"]["requestsPerSecond"] / summary[f"nginx-{mode}"]["requestsPerSecond"]
            summary[f"ratioDispatch-{mode}"] = (summary[f"pinsetDispatch-{mode}"]["requestsPerSecond"]
                                                / summary[f"nginx-{mode}"]["requestsPerSecond"])
        # Ratios of one round's runs, which ran back to back under the same background load; the median round.
        def round_ratios(numerator, denominator):
            return [n["requestsPerSecond"] / d["requestsPerSecond"] for n, d in zip(runs[numerator], runs[denominator])]
        for name, (numerator, denominator) in {"pinsetOverFloor": ("pinset-close", "floor-close"),
                                               "floorOverNginx": ("floor-close", "nginx-close")}.items():
            ratios = round_ratios(numerator, denominator)
            summary[f"close-{name}"] = {"median": statistics.median(ratios), "all": ratios}
        # 304s: against nginx, and against Pinset's own 200s of the same round (a 304 must never cost more).
        over_nginx = round_ratios("pinset-notModified", "nginx-notModified")
        over_ok = round_ratios("pinset-notModified", "pinset-keepalive")
        not_modified = {"pinset": summary["pinset-notModified"], "nginx": summary["nginx-notModified"],
                        "pinsetDispatch": summary["pinsetDispatch-notModified"],
                        "ratio": statistics.median(over_nginx), "roundRatios": over_nginx,
                        "overOwn200": statistics.median(over_ok), "roundRatiosOverOwn200": over_ok}

        # One run with the access log on (written to a file), to show its cost.
        logged = self.start_pinset(directory, access_log=True, name="pinset-accesslog", per_address_limit=False)
        if sizes["wrk_warmup_seconds"]:
            self.wrk(logged.port, path, seconds=sizes["wrk_warmup_seconds"])
        access = self.wrk(logged.port, path)
        access["peakRssKiB"] = proc_status(logged.pid).get("VmHWM", 0)
        access["logBytes"] = os.path.getsize(logged.stdout_path)
        self.stop(logged)
        access["relativeToAccessLogOff"] = access["requestsPerSecond"] / summary["pinset-keepalive"]["requestsPerSecond"]

        features = self.features_on_and_off(directory, path)

        self.results["steps"]["serving"] = {
            "customersInDatabase": sizes["serving_customers"], "wrkThreads": WRK_THREADS, "wrkConnections": WRK_CONNECTIONS,
            "wrkSeconds": sizes["wrk_seconds"], "rounds": sizes["wrk_rounds"], "served": served, "runs": summary,
            "notModified": not_modified, "closeProfile": close_profile, "accessLogOn": access, "pinsetPeakRssKiB": memory.get("VmHWM", 0), "pinsetRssKiB": memory.get("VmRSS", 0),
            "nginxPeakRssKiBAllProcesses": nginx_memory["VmHWM"], "features": features,
        }
        self.serving_directory = directory
        self.flood_good_client(directory, path)

    def features_on_and_off(self, directory, path):
        """Keep-alive with every per-request feature an operator turns on (the host monitor, uptake counting from
        `Pinset-Version`, per-address admission with a limit above wrk's connections, the reports listener)
        against the same server with them off, in alternating rounds; the median round's ratio."""
        listener = HoldingListener(hold=0.02)
        try:
            off = self.start_pinset(directory, name="pinset-features-off", per_address_limit=False)
            on = self.start_pinset(
                directory, name="pinset-features-on", per_address_limit=False,
                monitoring={"intervalSeconds": 60, "timeoutSeconds": 0.5, "concurrency": 8,
                            "connectTo": {"*": f"127.0.0.1:{listener.port}"}},
                reports={"host": "127.0.0.1", "port": 0},
                extra={"maxConnectionsPerAddress": 2 * WRK_CONNECTIONS},
            )
            version_header = "Pinset-Version: 1"
            if self.sizes["wrk_warmup_seconds"]:
                self.wrk(off.port, path, seconds=self.sizes["wrk_warmup_seconds"])
                self.wrk(on.port, path, seconds=self.sizes["wrk_warmup_seconds"], headers=[version_header])
            rounds = []
            seconds = self.sizes["features_seconds"]
            for round_number in range(self.sizes["features_rounds"]):
                if round_number % 2 == 0:
                    plain = self.wrk(off.port, path, seconds=seconds)
                    featured = self.wrk(on.port, path, seconds=seconds, headers=[version_header])
                else:
                    featured = self.wrk(on.port, path, seconds=seconds, headers=[version_header])
                    plain = self.wrk(off.port, path, seconds=seconds)
                rounds.append({"off": plain, "on": featured, "ratio": featured["requestsPerSecond"] / plain["requestsPerSecond"]})
                log(f"round {round_number + 1} features off: {plain['requestsPerSecond']:.0f} req/s, "
                    f"on: {featured['requestsPerSecond']:.0f} req/s ({rounds[-1]['ratio']:.2f})")
            status, _, body = http_get(on.port, "/status")
            uptake = json.loads(body).get("uptake", {}) if status == 200 else {}
            if not uptake.get("customers"):
                raise StepFailed(f"the features-on server counted no uptake: {uptake}")
            for process in (off, on):
                code = self.stop(process)
                if code != 0:
                    raise StepFailed(f"pinset serve exited with {code} after SIGTERM:\n{self.tail(process.stderr_path)}")
        finally:
            listener.stop()
        ratios = sorted(r["ratio"] for r in rounds)
        middle = len(ratios) // 2
        median = ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2
        return {"rounds": rounds, "medianRatio": median, "allRatios": ratios, "seconds": seconds,
                "pooledRatio": sum(r["on"]["requestsPerSecond"] for r in rounds) / sum(r["off"]["requestsPerSecond"] for r in rounds)}

    def flood_good_client(self, directory, path, attackers=2000, probes=50):
        """Latency of a good client (its own source address) while one address holds `attackers` silent sockets."""
        pinset = self.start_pinset(directory, name="pinset-flood", per_address_limit=True)
        held = []
        try:
            for _ in range(attackers):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.bind(("127.0.0.2", 0))
                sock.setblocking(False)
                sock.connect_ex(("127.0.0.1", pinset.port))
                held.append(sock)
            time.sleep(0.5)
            latencies, statuses = [], []
            for _ in range(probes):
                began = time.monotonic()
                connection = http.client.HTTPConnection("127.0.0.1", pinset.port, timeout=5, source_address=("127.0.0.3", 0))
                try:
                    connection.request("GET", path)
                    response = connection.getresponse()
                    response.read()
                    statuses.append(response.status)
                except OSError:
                    statuses.append(0)
                finally:
                    connection.close()
                latencies.append((time.monotonic() - began) * 1e6)
        finally:
            for sock in held:
                sock.close()
            self.stop(pinset)
        latencies.sort()
        self.results["steps"]["serving"]["floodGoodClient"] = {
            "attackerConnections": attackers, "probes": probes, "ok": statuses.count(200),
            "p50Microseconds": latencies[len(latencies) // 2], "maxMicroseconds": latencies[-1],
        }
        log(f"good client under a {attackers}-connection flood: {statuses.count(200)}/{probes} ok, max {latencies[-1]:.0f} us")

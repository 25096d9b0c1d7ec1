"""Steps `reports` (pin-failure reports accepted per second, SQLite and PostgreSQL) and `report-flood` (the
reports listener and store under a flood from many addresses)."""

import base64
import collections
import json
import os
import random
import re
import socket
import subprocess
import threading
import time

from .common import FLOOD_ADDRESSES, FLOOD_PER_ADDRESS_PER_MINUTE, POSTGRES_BIN, POSTGRES_ROLE, StepFailed, http_get, log, parse_wrk, percentile
from .render import fmt_s


class ReportSteps:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_reports(self):
        """Bundle latency with and without a flood of pin-failure reports on the reports listener: reports are
        counted in memory and written in batches off the connection queues, so serving should not wait for them."""
        sizes = self.sizes
        directory = self.init_data("reports", "p256")
        self.populate(directory, sizes["serving_customers"])
        path = "/customer-00001.json.signed"
        key, cert = os.path.join(self.temp, "reported-leaf.key"), os.path.join(self.temp, "reported-leaf.pem")
        self.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                  "-out", cert, "-days", "30", "-subj", "/CN=api.example.com"], timeout=60, what="openssl req")
        with open(cert) as f:
            leaf_pem = f.read()
        report = {
            "app-bundle-id": "com.example.app", "app-version": "1.0", "app-vendor-id": "VENDOR", "hostname": "api.example.com",
            "port": 443, "noted-hostname": "api.example.com", "include-subdomains": False, "enforce-pinning": True,
            "validated-certificate-chain": [leaf_pem], "validation-result": 1,
            "known-pins": ['pin-sha256="r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="'],
        }
        body = json.dumps(report)
        # Every request names another installation, so none is a duplicate and each is counted.
        script = os.path.join(self.temp, "reports.lua")
        with open(script, "w") as f:
            f.write("local body = " + json.dumps(body) + "\n"
                    "local counter = 0\n"
                    "request = function()\n"
                    "  counter = counter + 1\n"
                    "  local b = string.gsub(body, 'VENDOR', 'install-' .. counter .. '-' .. math.random(1, 1000000000))\n"
                    "  return wrk.format('POST', '/report/customer-00001', {['Content-Type'] = 'application/json'}, b)\n"
                    "end\n")
        settings = {"host": "127.0.0.1", "port": 0, "reportsPerMinutePerAddress": 1000000, "maxTrackedAddresses": 10}
        runs = {}
        for mode in ("off", "on"):
            server = self.start_pinset(directory, name=f"pinset-reports-{mode}", per_address_limit=False, reports=settings)
            match = re.search(r"pinset reports listening on 127\.0\.0\.1:(\d+)", self.tail(server.stdout_path, limit=10**9))
            if match is None:
                raise StepFailed("pinset serve printed no reports listener:\n" + self.tail(server.stdout_path))
            reports_port = int(match.group(1))
            if sizes["wrk_warmup_seconds"]:
                self.wrk(server.port, path, seconds=sizes["wrk_warmup_seconds"])
            flood = None
            if mode == "on":
                seconds = sizes["wrk_seconds"] + 1
                flood = self.start("wrk-reports", ["wrk", "-t1", "-c16", f"-d{seconds}s", "--timeout", "5s", "-s", script,
                                                   f"http://127.0.0.1:{reports_port}/report/customer-00001"])
                time.sleep(0.5)
            result = self.wrk(server.port, path)
            if flood is not None:
                flood.wait(timeout=sizes["wrk_seconds"] + 60)
                flood_result = parse_wrk(self.tail(flood.stdout_path, limit=10**6))
                if flood_result.get("requests", 0) == 0:
                    raise StepFailed("the report flood completed no request:\n" + self.tail(flood.stdout_path))
                time.sleep(1.5)  # one write interval, so the last counts are stored
                status, _, status_body = http_get(server.port, "/status")
                counted = sum(json.loads(status_body)["reports"].get("failuresLastHour", {}).values()) if status == 200 else 0
                if counted == 0:
                    raise StepFailed("the reports listener counted no report during the flood")
                result.update(reportsPerSecond=flood_result["requestsPerSecond"], reportsSent=flood_result["requests"],
                              reportsCounted=counted)
            code = self.stop(server)
            if code != 0:
                raise StepFailed(f"pinset serve exited with {code} after SIGTERM:\n{self.tail(server.stderr_path)}")
            if mode == "on":
                stored = json.loads(self.run([self.pinset, "reports", "--data-dir", directory, "--json", "--since", "2h"],
                                             timeout=60, what="pinset reports").stdout)
                result["reportsStored"] = sum(row["reports"] for row in stored)
                if result["reportsStored"] != result["reportsCounted"]:
                    raise StepFailed(f"{result['reportsCounted']} reports counted but {result['reportsStored']} stored")
            runs[mode] = result
            log(f"reports flood {mode}: {result['requestsPerSecond']:.0f} bundle req/s, p99 {result.get('p99Microseconds', 0):.0f} us"
                + (f", {result['reportsPerSecond']:.0f} reports/s, {result['reportsStored']} stored" if mode == "on" else ""))
        self.results["steps"]["reports"] = {"runs": runs}

    # ----- admin edits during a report flood -------------------------------------------------------------

    def step_report_flood(self):
        """`pinset pin add` latency while 50 client addresses each send distinct reports at the per-address limit,
        with `flood_stored_rows` rows already stored for the customer and hour, on SQLite and on PostgreSQL."""
        sizes = self.sizes
        postgres_running = self.postgres is not None and self.postgres["process"].poll() is None
        if not postgres_running:
            # The postgres step's server stopped with that step; this one is the step's own.
            self.start_postgres(name="postgres-report-flood")
        # A deployment of its own: the stored rows and edits must not change what other steps measure.
        directory = self.init_data("report-flood", "p256")
        self.populate(directory, sizes["serving_customers"])
        database = "pinset_report_flood"
        self.psql(f"CREATE DATABASE {database} OWNER {POSTGRES_ROLE} ENCODING 'UTF8';")
        url = f"postgres://{POSTGRES_ROLE}@127.0.0.1:{self.postgres['port']}/{database}"
        self.run([self.pinset, "store", "copy", "--from", os.path.join(directory, "pinset.sqlite"), "--to", url], timeout=600,
                 what="pinset store copy", env=self.postgres_env())
        deployment = {"directory": directory, "url": url}
        key, cert = os.path.join(self.temp, "flood-leaf.key"), os.path.join(self.temp, "flood-leaf.pem")
        self.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                  "-out", cert, "-days", "30", "-subj", "/CN=api-1.customer-1.example.com"], timeout=60, what="openssl req")
        with open(cert) as f:
            leaf_pem = f.read()
        runs = {}
        for backend in ("sqlite", "postgresql"):
            runs[backend] = self.report_flood(deployment, backend, leaf_pem)
        self.results["steps"]["report-flood"] = {
            "addresses": FLOOD_ADDRESSES, "perAddressPerMinute": FLOOD_PER_ADDRESS_PER_MINUTE,
            "storedRows": sizes["flood_stored_rows"], "runs": runs,
        }

    def prefill_report_rows(self, deployment, backend, rows):
        """`rows` distinct hourly counts of customer-00001 in the current hour, written in one statement (the way
        a long flood would have left them), with the hour's row count that migration 0008 keeps beside them."""
        hour = int(time.time()) // 3600 * 3600
        host = "api-1.customer-1.example.com"
        insert = ("INSERT INTO pin_failure_report_hour (customer_id, hour, hostname, validation_result, leaf_spki_sha256, "
                  "pinset_version, app_version, reports) SELECT (SELECT id FROM customer WHERE name = 'customer-00001'), "
                  f"{hour}, '{host}', 1, NULL, NULL, 'stored-' || n, 1 FROM {{series}};\n"
                  "INSERT INTO pin_failure_report_bucket (customer_id, hour, stored_rows, other_reports, unpublished_host_reports) "
                  f"SELECT (SELECT id FROM customer WHERE name = 'customer-00001'), {hour}, {rows}, 0, 0 "
                  "ON CONFLICT (customer_id, hour) DO UPDATE SET stored_rows = excluded.stored_rows;\n")
        if backend == "sqlite":
            series = f"(WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {rows}) SELECT n FROM s)"
            self.run(["sqlite3", os.path.join(deployment["directory"], "pinset.sqlite")], timeout=300, what="sqlite3",
                     input=insert.replace("{series}", series))
        else:
            series = f"generate_series(1, {rows}) AS n"
            self.run([os.path.join(POSTGRES_BIN, "psql"), "-X", "-w", "-q", "-v", "ON_ERROR_STOP=1", deployment["url"], "-f", "-"],
                     timeout=300, what="psql", input=insert.replace("{series}", series) + "ANALYZE pin_failure_report_hour;\n",
                     env=self.postgres_env())

    def report_flood(self, deployment, backend, leaf_pem):
        sizes = self.sizes
        self.prefill_report_rows(deployment, backend, sizes["flood_stored_rows"])
        database = deployment["url"] if backend == "postgresql" else None
        env = self.postgres_env() if backend == "postgresql" else None
        settings = {"host": "127.0.0.1", "port": 0, "proxyProtocol": True,
                    "reportsPerMinutePerAddress": FLOOD_PER_ADDRESS_PER_MINUTE}
        server = self.start_pinset(deployment["directory"], name=f"pinset-flood-{backend}", reports=settings,
                                   database=database, env=env)
        match = re.search(r"pinset reports listening on 127\.0\.0\.1:(\d+)", self.tail(server.stdout_path, limit=10**9))
        if match is None:
            raise StepFailed("pinset serve printed no reports listener:\n" + self.tail(server.stdout_path))
        reports_port = int(match.group(1))
        stop = threading.Event()
        statuses = collections.Counter()
        lock = threading.Lock()

        def flood(address_index):
            # One source address per thread, presented through the PROXY protocol, at the per-address limit.
            source = f"10.0.{address_index // 250}.{address_index % 250 + 1}"
            interval = 60.0 / FLOOD_PER_ADDRESS_PER_MINUTE
            sent = 0
            next_at = time.monotonic() + random.random() * interval
            while not stop.is_set():
                delay = next_at - time.monotonic()
                if delay > 0 and stop.wait(delay):
                    break
                next_at += interval
                sent += 1
                body = json.dumps({
                    "app-bundle-id": "com.example.app", "app-version": f"{address_index}.{sent}",
                    "app-vendor-id": f"install-{address_index}-{sent}", "hostname": "api-1.customer-1.example.com",
                    "port": 443, "noted-hostname": "api-1.customer-1.example.com", "include-subdomains": False,
                    "enforce-pinning": True, "validated-certificate-chain": [leaf_pem], "validation-result": 1,
                    "known-pins": ['pin-sha256="r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="'],
                }).encode()
                request = (f"PROXY TCP4 {source} 127.0.0.1 40000 {reports_port}\r\n"
                           f"POST /report/customer-00001 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                           f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
                status = 0
                try:
                    with socket.create_connection(("127.0.0.1", reports_port), timeout=5) as connection:
                        connection.sendall(request)
                        answer = connection.recv(64)
                        status = int(answer.split(b" ")[1]) if answer.startswith(b"HTTP/1.1 ") else 0
                except (OSError, ValueError, IndexError):
                    status = 0
                with lock:
                    statuses[status] += 1

        threads = [threading.Thread(target=flood, args=(index,), daemon=True) for index in range(FLOOD_ADDRESSES)]
        for thread in threads:
            thread.start()
        latencies, failures = [], []
        began = time.monotonic()
        edits = sizes["flood_edits"]
        pause = max(0.05, sizes["flood_seconds"] / max(1, edits) - 0.05)
        try:
            time.sleep(min(2.0, sizes["flood_seconds"] / 3))
            for edit in range(edits):
                argv = [self.pinset, "pin", "add", "--skip-live-check", "--reason", "bench", "--data-dir", deployment["directory"],
                        "--actor", "bench", "--json", "customer-00001", "api-1.customer-1.example.com",
                        "--hash", base64.b64encode(os.urandom(32)).decode()]
                if database:
                    argv += ["--database", database]
                started = time.monotonic()
                completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, env=env)
                elapsed = time.monotonic() - started
                if completed.returncode != 0:
                    failures.append(completed.stderr.strip()[-300:])
                else:
                    latencies.append(elapsed)
                time.sleep(random.random() * pause)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=10)
        flood_seconds = time.monotonic() - began
        code = self.stop(server)
        if code != 0:
            raise StepFailed(f"pinset serve ({backend}) exited with {code} after SIGTERM:\n{self.tail(server.stderr_path)}")
        if statuses.get(202, 0) == 0:
            raise StepFailed(f"no report of the flood was accepted ({backend}): {dict(statuses)}")
        ordered = sorted(latencies)
        result = {
            "edits": edits, "failedEdits": len(failures), "failures": failures[:3],
            "p50Seconds": percentile(ordered, 0.5) if ordered else None, "p99Seconds": percentile(ordered, 0.99) if ordered else None,
            "maxSeconds": ordered[-1] if ordered else None,
            "reportsAccepted": statuses.get(202, 0), "reportsPerSecond": statuses.get(202, 0) / flood_seconds,
            "statuses": {str(k): v for k, v in sorted(statuses.items())},
        }
        log(f"report flood {backend}: {edits - len(failures)}/{edits} edits succeeded, p50 "
            f"{fmt_s(result['p50Seconds'])}, p99 {fmt_s(result['p99Seconds'])}, {result['reportsPerSecond']:.1f} reports/s accepted"
            + (f"; first failure: {failures[0]}" if failures else ""))
        return result

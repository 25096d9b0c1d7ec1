"""Step `monitoring`: live-chain checks of many hosts with bounded connections while bundles are served."""

import json
import time

from .common import HoldingListener, StepFailed, http_get, log


class MonitoringSteps:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_monitoring(self):
        """Bundle latency with and without the host monitor checking every host continuously."""
        sizes = self.sizes
        directory = self.init_data("monitoring", "p256")
        self.populate(directory, sizes["monitor_customers"])
        hosts = sizes["monitor_customers"] * 5
        path = "/customer-00001.json.signed"
        concurrency = 8
        runs = {}
        listener = HoldingListener(hold=0.02)
        try:
            for mode in ("off", "on"):
                monitoring = None
                if mode == "on":
                    # Every host is reached at the holding listener; a pass starts every second (or as soon as the
                    # previous one ends), so checks run during the whole wrk run.
                    monitoring = {"intervalSeconds": 1, "timeoutSeconds": 0.5, "concurrency": concurrency,
                                  "connectTo": {"*": f"127.0.0.1:{listener.port}"}}
                server = self.start_pinset(directory, name=f"pinset-monitoring-{mode}", per_address_limit=False, monitoring=monitoring)
                if sizes["wrk_warmup_seconds"]:
                    self.wrk(server.port, path, seconds=sizes["wrk_warmup_seconds"])
                result = self.wrk(server.port, path)
                if mode == "on":
                    # A smoke run's wrk lasts a second, which a loaded machine may end before the first pass does:
                    # the step waits for that pass (bounded) rather than judging the monitor by wrk's length.
                    deadline = time.monotonic() + 15
                    while True:
                        status, _, body = http_get(server.port, "/status")
                        report = json.loads(body)["monitoring"] if status == 200 else {}
                        if report.get("passes", 0) >= 1 or time.monotonic() > deadline:
                            break
                        time.sleep(0.1)
                    if status != 200 or report.get("passes", 0) < 1:
                        raise StepFailed(f"the monitor completed no pass within 15 s of the run's start: {report}")
                    if report["counts"].get("unreachable") != hosts:
                        raise StepFailed(f"expected {hosts} unreachable hosts, /status counts {report['counts']}")
                    result.update(passes=report["passes"], lastPassMilliseconds=report.get("lastPassMilliseconds"),
                                  checkConnections=listener.accepted, peakCheckConnections=listener.peak)
                    if listener.peak > concurrency:
                        raise StepFailed(f"the monitor held {listener.peak} connections at once; its concurrency is {concurrency}")
                code = self.stop(server)
                if code != 0:
                    raise StepFailed(f"pinset serve exited with {code} after SIGTERM:\n{self.tail(server.stderr_path)}")
                runs[mode] = result
                log(f"monitoring {mode}: {result['requestsPerSecond']:.0f} req/s, p50 {result.get('p50Microseconds', 0):.0f} us, "
                    f"p99 {result.get('p99Microseconds', 0):.0f} us")
        finally:
            listener.stop()
        self.results["steps"]["monitoring"] = {"hosts": hosts, "concurrency": concurrency, "holdSeconds": 0.02, "runs": runs}

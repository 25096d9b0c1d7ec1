#!/usr/bin/env python3
"""Pinset benchmark suite. Run it through Benchmarks/run, which builds first; BENCHMARKS.md explains the method.

Talks to 127.0.0.1 only. Every process it starts is recorded and stopped by its pid when the suite ends,
fails or is interrupted (SIGINT/SIGTERM); every wait and every run has a time limit; the temporary
directory is removed at the end.
"""

import argparse
import datetime
import json
import os
import signal
import sys
import tempfile
import time

from bench.access_log import AccessLogStep
from bench.admin_flood import AdminFloodStep
from bench.common import HERE, REPO, STEPS, StepFailed, log
from bench.first_start import FirstStartStep
from bench.harness import Harness
from bench.monitoring import MonitoringSteps
from bench.postgres import PostgresSteps
from bench.render import merged_into, render, update_markdown
from bench.reports import ReportSteps
from bench.review import ReviewSteps
from bench.scale import ScaleSteps
from bench.serving import ServingSteps
from bench.signing import SigningSteps
from bench.transparency_log import TransparencyStep


class Suite(Harness, ServingSteps, AccessLogStep, SigningSteps, ScaleSteps, MonitoringSteps, ReportSteps, PostgresSteps,
            ReviewSteps, AdminFloodStep, TransparencyStep, FirstStartStep):
    """The harness with every step; `execute` runs the steps asked for, in the order of STEPS."""

    def execute(self):
        self.temp = tempfile.mkdtemp(prefix="pinset-bench-")
        self.results["mode"] = "smoke" if self.options.smoke else "full"
        self.results["machine"] = self.machine()
        self.wait_for_idle()
        self.results["loadAverageAtStart"] = os.getloadavg()
        self.results["startedAt"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        steps = {"serving": self.step_serving, "access-log": self.step_access_log, "signing": self.step_signing,
                 "client": self.step_client, "scale": self.step_scale, "monitoring": self.step_monitoring,
                 "reports": self.step_reports, "postgres": self.step_postgres, "report-flood": self.step_report_flood,
                 "review": self.step_review, "admin-flood": self.step_admin_flood,
                 "transparency": self.step_transparency, "first-start": self.step_first_start}
        assert list(steps) == STEPS, "every step in STEPS, in its order"
        for name, step in steps.items():
            if self.options.only and name not in self.options.only:
                continue
            log(f"step {name}")
            began = time.monotonic()
            try:
                step()
            except StepFailed as error:
                log(f"step {name} FAILED: {error}")
                self.results["failures"].append({"step": name, "error": str(error)})
            finally:
                for process in list(self.processes):
                    self.stop(process)
            self.results.setdefault("stepSeconds", {})[name] = round(time.monotonic() - began, 1)
        self.results["loadAverageAtEnd"] = os.getloadavg()


def main():
    parser = argparse.ArgumentParser(description="Pinset benchmark suite (see BENCHMARKS.md).")
    parser.add_argument("--bin-dir", help="directory holding the built pinset and pinset-bench")
    parser.add_argument("--render", metavar="RESULTS_JSON",
                        help="measure nothing: rewrite BENCHMARKS.md and the .md next to RESULTS_JSON from that file")
    parser.add_argument("--configuration", default="release")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, 1-second wrk runs; results are printed, not saved")
    parser.add_argument("--only", nargs="*", choices=STEPS)
    parser.add_argument("--wait-for-idle", type=int, default=0, metavar="SECONDS",
                        help="wait up to this long for the 1-minute load average to fall below 1 before measuring")
    parser.add_argument("--output", help="results JSON (default: Benchmarks/results/latest.json; with --smoke or --only: none)")
    parser.add_argument("--merge", action="store_true",
                        help="with --only: put these steps' results into Benchmarks/results/latest.json in place of that file's, "
                             "noting when they ran, and rewrite latest.md and BENCHMARKS.md from it")
    options = parser.parse_args()
    if options.merge and (options.smoke or not options.only or options.output or options.render):
        parser.error("--merge needs --only STEP... and goes with neither --smoke, --output nor --render")

    if options.render:
        with open(options.render) as f:
            results = json.load(f)
        section = render(results)
        with open(os.path.splitext(options.render)[0] + ".md", "w") as f:
            f.write(section + "\n")
        update_markdown(os.path.join(REPO, "BENCHMARKS.md"), section)
        print(section)
        return 0
    if not options.bin_dir:
        parser.error("--bin-dir is required")

    def terminate(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)

    suite = Suite(options)
    try:
        suite.execute()
    finally:
        suite.cleanup()
    results = suite.results
    section = render(results)
    if options.merge and not results["failures"]:
        results = merged_into(os.path.join(HERE, "results", "latest.json"), results)
        section = render(results)
    output = options.output or (None if options.smoke or (options.only and not options.merge) else os.path.join(HERE, "results", "latest.json"))
    if options.merge and results["failures"]:
        output = None
    if output:
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        with open(output, "w") as f:
            json.dump(results, f, indent=2, sort_keys=True)
            f.write("\n")
        with open(os.path.splitext(output)[0] + ".md", "w") as f:
            f.write(section + "\n")
        log(f"wrote {output}")
    if not options.smoke and (not options.only or options.merge) and not results["failures"]:
        update_markdown(os.path.join(REPO, "BENCHMARKS.md"), section)
        log("updated the results section of BENCHMARKS.md")
    print(section)
    if results["failures"]:
        log(f"{len(results['failures'])} step(s) failed: {', '.join(f['step'] for f in results['failures'])}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Step `postgres`: several instances on one PostgreSQL database; serving, passes and edit-to-served propagation
against SQLite."""

import base64
import json
import os
import random
import re
import time

from .common import CHANGE_POLL_SECONDS, PROPAGATION_INSTANCES, StepFailed, http_get, latency_summary, log


class PostgresSteps:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def propagation(self, deployment, backend, edits):
        """Seconds from `pinset pin add` returning (its transaction committed) until all instances serve the new
        content version, for `edits` edits spread over the customers."""
        database = deployment["sqlite"] if backend == "sqlite" else deployment["url"]
        env = self.postgres_env() if backend == "postgresql" else None
        customers = deployment["customers"]
        instances = []
        for number in range(1, PROPAGATION_INSTANCES + 1):
            directory = self.instance_directory(deployment["directory"], f"{backend}-{customers}-instance-{number}")
            instances.append(self.start_pinset(directory, name=f"pinset-{backend}-{customers}-{number}",
                                               database=database, env=env))
        latencies = []
        # A random pause before each edit: edits made right after the last one was served would fall at the same
        # point of the instances' polling cycle every time.
        pauses = random.Random(customers)
        for edit in range(edits):
            time.sleep(pauses.uniform(0, CHANGE_POLL_SECONDS))
            customer = edit % customers + 1
            name = f"customer-{customer:05d}"
            spki_hash = base64.b64encode(os.urandom(32)).decode()
            completed = self.run([self.pinset, "pin", "add", "--database", database, "--skip-live-check", "--reason", "bench",
                                  "--actor", "bench", "--json", name, f"api-1.customer-{customer}.example.com", "--hash", spki_hash],
                                 timeout=120, what="pinset pin add", env=env)
            committed = time.monotonic()
            version = json.loads(completed.stdout)["version"]
            pending = list(instances)
            deadline = committed + 120
            while pending and time.monotonic() < deadline:
                for instance in list(pending):
                    status, _, body = http_get(instance.port, f"/{name}.json.signed")
                    match = re.search(rb'"version":(\d+)', body)
                    if status == 200 and match and int(match.group(1)) >= version:
                        pending.remove(instance)
                if pending:
                    time.sleep(0.005)
            if pending:
                raise StepFailed(f"{len(pending)} of {len(instances)} instances on {backend} did not serve version {version} "
                                 f"of {name} within 120 s")
            latencies.append(time.monotonic() - committed)
        for instance in instances:
            code = self.stop(instance)
            if code != 0:
                raise StepFailed(f"pinset serve on {backend} exited with {code} after SIGTERM:\n{self.tail(instance.stderr_path)}")
        summary = latency_summary(latencies)
        log(f"{backend} {customers} customers, {edits} edits: median {summary['median'] * 1000:.0f} ms, "
            f"p99 {summary['p99'] * 1000:.0f} ms, max {summary['max'] * 1000:.0f} ms")
        return summary

    def step_postgres(self):
        sizes = self.sizes
        version = self.start_postgres()
        deployment = self.deployment(sizes["postgres_customers"])
        backends = {backend: self.backend_start(deployment, backend) for backend in ("sqlite", "postgresql")}
        propagation = []
        for customers, edits in sizes["propagation"]:
            edited = self.deployment(customers)
            propagation.append({"customers": customers, "edits": edits, "instances": PROPAGATION_INSTANCES,
                                **{backend: self.propagation(edited, backend, edits) for backend in ("sqlite", "postgresql")}})
        self.results["steps"]["postgres"] = {
            "postgres": version, "customers": deployment["customers"], "runs": sizes["postgres_runs"],
            "copySeconds": {str(d["customers"]): d["copySeconds"] for d in self.deployments.values()},
            "backends": backends, "propagation": propagation,
        }

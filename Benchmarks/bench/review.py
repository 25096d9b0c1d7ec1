"""Step `review`: approval to served latency of reviewed changes through the admin API."""

import base64
import http.client
import json
import os
import random
import re
import time

from .common import CHANGE_POLL_SECONDS, StepFailed, free_port, http_get, latency_summary, log


class ReviewSteps:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_review(self):
        """Edit-to-served latency through the admin API with two-person review: an editor proposes a pin edit, a
        reviewer approves it, and the time from sending the approval until the server serves the new version is
        measured (the approval's own round trip beside it), over `review_changes` approved changes on SQLite."""
        sizes = self.sizes
        directory = self.init_data("review", "p256")
        self.populate(directory, 100)
        database = os.path.join(directory, "pinset.sqlite")
        customer, host = "customer-00001", "api-1.customer-1.example.com"

        def cli(*args):
            return self.run([self.pinset, *args, "--database", database], timeout=120, what=f"pinset {args[0]} {args[1]}").stdout

        # The host is unmonitored: the live-chain check an approval runs has nothing to reach on loopback.
        cli("host", "update", customer, host, "--unmonitored", "benchmark host, not served")
        cli("admin", "add", "alice", "--role", f"editor:{customer}")
        cli("admin", "add", "bob", "--role", f"reviewer:{customer}")
        tokens = {name: cli("admin", "token", name, "--label", "bench").strip() for name in ("alice", "bob")}
        cli("admin", "require-review", customer)
        api_port = free_port()
        server = self.start_pinset(directory, name="pinset-review", extra={"api": {"host": "127.0.0.1", "port": api_port}})

        def call(method, path, admin, body):
            connection = http.client.HTTPConnection("127.0.0.1", api_port, timeout=30)
            try:
                connection.request(method, path, body=json.dumps(body), headers={
                    "Authorization": f"Bearer {tokens[admin]}", "Content-Type": "application/json"})
                response = connection.getresponse()
                document = json.loads(response.read() or b"null")
                return response.status, document
            finally:
                connection.close()

        approvals, latencies = [], []
        added = None
        pauses = random.Random(7)
        for change in range(sizes["review_changes"]):
            # A random pause, as in the propagation runs: approvals must not all fall at one point of the poll.
            time.sleep(pauses.uniform(0, CHANGE_POLL_SECONDS))
            if added is None:
                added = base64.b64encode(os.urandom(32)).decode()
                edit = {"hashes": [added], "reason": f"benchmark change {change}"}
            else:
                edit, added = {"remove": added, "reason": f"benchmark change {change}"}, None
            status, document = call("POST", f"/api/v1/customers/{customer}/hosts/{host}/pins", "alice", edit)
            if status != 202:
                raise StepFailed(f"proposing change {change} answered {status}: {document}")
            request_id = document["changeRequest"]["id"]
            sent = time.monotonic()
            status, document = call("POST", f"/api/v1/change-requests/{request_id}/approve", "bob", {})
            approved = time.monotonic()
            if status != 200:
                raise StepFailed(f"approving change {change} answered {status}: {document}")
            version = document["appliedVersion"]
            deadline = approved + 120
            while True:
                code, _, body = http_get(server.port, f"/{customer}.json.signed")
                match = re.search(rb'"version":(\d+)', body)
                if code == 200 and match and int(match.group(1)) >= version:
                    break
                if time.monotonic() > deadline:
                    raise StepFailed(f"version {version} of {customer} was not served within 120 s of its approval")
                time.sleep(0.005)
            served = time.monotonic()
            approvals.append(approved - sent)
            latencies.append(served - sent)
        code = self.stop(server)
        if code != 0:
            raise StepFailed(f"pinset serve exited with {code} after SIGTERM:\n{self.tail(server.stderr_path)}")
        summary = latency_summary(latencies)
        log(f"review: {len(latencies)} approved changes, approval to served median {summary['median'] * 1000:.0f} ms, "
            f"p99 {summary['p99'] * 1000:.0f} ms")
        self.results["steps"]["review"] = {"changes": len(latencies), "approveToServed": summary, "approval": latency_summary(approvals)}

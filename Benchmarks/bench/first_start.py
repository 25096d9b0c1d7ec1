"""Step `first-start`: the README's first start, from a fresh clone of the committed HEAD to the demo bundle served."""

import os
import re
import signal
import subprocess
import time

from .common import REPO, StepFailed, http_get, log

# The target for `scripts/serve` on a fresh clone of this machine: a developer sees the product within five minutes.
TARGET_SECONDS = 300
# Long enough for a loaded machine; the step fails, rather than waits, past it.
LIMIT_SECONDS = 900


class FirstStartStep:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_first_start(self):
        """A clone of HEAD, `scripts/serve --port 0` in it, and the time until the demo bundle it names is served
        and verifies against the trust certificate it made."""
        if self.options.smoke:
            # A first start compiles every dependency (minutes); the suite's ServeScriptFirstStartTests runs the
            # script itself on every CI run.
            self.results["steps"]["first-start"] = {"skipped": "smoke mode: a first start compiles every dependency"}
            log("first-start: skipped in smoke mode")
            return
        # A clone has what is committed, never the work tree's uncommitted changes: the commit is the clone's own.
        checkout = os.path.join(self.temp, "first-start")
        self.run(["git", "clone", "-q", REPO, checkout], 300, what="git clone")
        commit = self.run(["git", "-C", checkout, "rev-parse", "--short", "HEAD"], 30).stdout.strip()
        # As on a machine that never built Swift: the caches SwiftPM and the compilers keep under $XDG_CACHE_HOME
        # (the clones of every dependency, the module cache) start empty. And as a developer starts it: no data
        # location in the environment (one would turn the demo off).
        environment = {k: v for k, v in os.environ.items() if k not in ("PINSET_DATA_DIR", "PINSET_PUBLIC_SUFFIX_LIST", "PINSET_CONFIG")}
        environment["XDG_CACHE_HOME"] = os.path.join(self.temp, "first-start-cache")
        began = time.monotonic()
        # Its own process group: until `swift run` execs the server, the compilers are its children, and a failed
        # step stops them with it.
        server = self.start("first-start", [os.path.join(checkout, "scripts", "serve"), "--port", "0"], cwd=checkout,
                            env=environment, start_new_session=True)
        try:
            seconds = self.wait_for_demo_bundle(server, began)
        finally:
            try:
                try:
                    os.killpg(server.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                code = self.stop(server, timeout=30)
            finally:
                # Whatever outlived the server in its group (a compiler, if the start failed while building).
                try:
                    os.killpg(server.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        output = self.tail(server.stdout_path, limit=1_000_000) + self.tail(server.stderr_path, limit=1_000_000)
        build = re.search(r"Build of product 'pinset' complete! \(([\d.]+)s\)", output)
        # Once the bundle was served, the pid is pinset's (scripts/serve and `swift run` exec it), which exits 0
        # on SIGTERM after a clean shutdown.
        if code != 0:
            raise StepFailed(f"scripts/serve exited with {code} after SIGTERM:\n{self.tail(server.stderr_path)}")
        result = {"commit": commit, "seconds": round(seconds, 1), "buildSeconds": float(build.group(1)) if build else None,
                  "targetSeconds": TARGET_SECONDS, "buildConfiguration": "debug (scripts/serve's)"}
        self.results["steps"]["first-start"] = result
        log(f"first-start: demo bundle served {seconds:.1f} s after scripts/serve started "
            f"(build {result['buildSeconds']} s)")

    def wait_for_demo_bundle(self, server, began):
        """Seconds from `began` to the first 200 for the demo bundle at the address the start printed, after
        checking that the bundle verifies with openssl against the trust certificate the start printed."""
        while time.monotonic() - began < LIMIT_SECONDS:
            if server.poll() is not None:
                raise StepFailed(f"scripts/serve exited with {server.returncode} before serving:\n{self.tail(server.stderr_path)}\n"
                                 f"{self.tail(server.stdout_path)}")
            output = self.tail(server.stdout_path, limit=1_000_000)
            address = re.search(r"curl -sS http://127\.0\.0\.1:(\d+)/demo\.json\.signed", output)
            trust = re.search(r"openssl smime -verify .* -CAfile (\S+)", output)
            if address and trust:
                trust = trust.group(1)
                try:
                    status, _, body = http_get(int(address.group(1)), "/demo.json.signed")
                except OSError:
                    # Not listening yet, or a connection cut short: the next poll asks again.
                    status = None
                if status == 200:
                    served = time.monotonic() - began
                    verified = subprocess.run(["openssl", "smime", "-verify", "-inform", "der", "-CAfile", trust],
                                              input=body, capture_output=True, timeout=30)
                    if verified.returncode != 0 or b'"customer":"demo"' not in verified.stdout:
                        raise StepFailed(f"the demo bundle does not verify against {trust}: {verified.stderr.decode(errors='replace')}")
                    return served
            time.sleep(0.25)
        raise StepFailed(f"no demo bundle within {LIMIT_SECONDS} s of scripts/serve starting:\n{self.tail(server.stdout_path)}")


def render(result, verdict):
    """The step's section of BENCHMARKS.md's results, as lines."""
    if "skipped" in result:
        return []
    build = f"{result['buildSeconds']:.1f} s" if result.get("buildSeconds") is not None else "–"
    return [
        "### 12. First start from a fresh clone",
        "",
        f"`git clone` of commit {result['commit']}, then the README's `scripts/serve` (here `--port 0`) in it, timed until "
        "the demo bundle at the address it prints answers 200 (checked with `openssl smime -verify` against the "
        "development trust certificate it made). `XDG_CACHE_HOME` names a new, empty directory, so SwiftPM clones "
        "every dependency from the package mirror and the compilers start without a module cache; the system "
        "packages serving needs were installed. Almost all of it is compiling, and the two copies of BoringSSL "
        "(swift-crypto's and swift-nio-ssl's) take about half of that.",
        "",
        "| | seconds | of which building `pinset` | target |",
        "| --- | ---: | ---: | --- |",
        f"| fresh clone → first demo bundle | **{result['seconds']:.1f}** | {build} | ≤ {result['targetSeconds']} s: "
        f"{verdict(result['seconds'] <= result['targetSeconds'])} |",
        "",
    ]

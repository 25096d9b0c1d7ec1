"""The benchmark suite's harness: the processes it starts and stops by pid (pinset, nginx, PostgreSQL, wrk), the
data directories it fills, and the waits on a server's log and files that every step shares."""

import collections
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from .common import FULL, LOG_POLL_SECONDS, PERSISTED_BUNDLES, POSTGRES_BIN, POSTGRES_ROLE, REPO, SMOKE, StepFailed, WRK_CONNECTIONS, WRK_THREADS, free_port, http_get, log, parse_wrk, perf_shares, proc_status


class Harness:
    """What every step runs on: `self.options`, `self.sizes`, `self.results`, the processes started, the
    temporary directory."""

    def __init__(self, options):
        self.options = options
        self.sizes = SMOKE if options.smoke else FULL
        self.pinset = os.path.join(options.bin_dir, "pinset")
        self.bench = os.path.join(options.bin_dir, "pinset-bench")
        for binary in (self.pinset, self.bench):
            if not os.access(binary, os.X_OK):
                raise StepFailed(f"{binary} is missing; build it first (Benchmarks/run does)")
        self.processes = []  # every subprocess.Popen we started and have not stopped yet
        self.temp = None
        self.results = {"steps": {}, "failures": []}
        self.scale_deployments = {}  # customers -> data directory the scale step left behind
        self.postgres = None  # the postgres step's server: its process, port and passwords
        self.deployments = {}  # customers -> the SQLite directory and PostgreSQL URL of that deployment

    # ----- processes -----------------------------------------------------------------------------------

    def start(self, name, argv, **kwargs):
        stdout_path = os.path.join(self.temp, f"{name}.stdout")
        stderr_path = os.path.join(self.temp, f"{name}.stderr")
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, **kwargs)
        process.stdout_path, process.stderr_path, process.name = stdout_path, stderr_path, name
        self.processes.append(process)
        return process

    def stop(self, process, sig=None, timeout=15):
        """Stops one process we started, by its pid; SIGKILL if it does not exit within `timeout` (or the longer
        `stop_timeout` the process was given). A process that stops a child of its own when it ends (pinset-bench
        postgres) also names, in `after_stop`, what to do should that child outlive it."""
        timeout = max(timeout, getattr(process, "stop_timeout", 0))
        if process.poll() is None:
            try:
                os.kill(process.pid, sig or signal.SIGTERM)
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log(f"{process.name} (pid {process.pid}) did not stop within {timeout} s; killing it. {self.stuck_threads(process.pid)}")
                try:
                    os.kill(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(timeout=10)
            except ProcessLookupError:
                pass
        for action in getattr(process, "after_stop", ()):
            action()
        if process in self.processes:
            self.processes.remove(process)
        return process.returncode

    @staticmethod
    def stuck_threads(pid):
        """What a process that ignores SIGTERM is doing: each thread's state and kernel wait channel, and where gdb
        is installed, every thread's stack saved to a file outside the temporary directory (which is removed)."""
        states = collections.Counter()
        for task in sorted(os.listdir(f"/proc/{pid}/task")) if os.path.isdir(f"/proc/{pid}/task") else []:
            try:
                with open(f"/proc/{pid}/task/{task}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                with open(f"/proc/{pid}/task/{task}/wchan") as f:
                    wchan = f.read().strip() or "-"
                states[f"{state}:{wchan}"] += 1
            except OSError:
                pass
        text = "Threads (state:wait channel): " + ", ".join(f"{k} ×{v}" for k, v in states.most_common())
        if shutil.which("gdb"):
            path = os.path.join(tempfile.gettempdir(), f"pinset-bench-stuck-{pid}.txt")
            try:
                completed = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 20"],
                                           capture_output=True, text=True, timeout=60)
                with open(path, "w") as f:
                    f.write(completed.stdout + completed.stderr)
                text += f"; stacks in {path}"
            except (OSError, subprocess.TimeoutExpired):
                pass
        return text

    def stop_all(self):
        for process in list(reversed(self.processes)):
            self.stop(process, timeout=10)

    def tail(self, path, limit=3000):
        try:
            with open(path, errors="replace") as f:
                return f.read()[-limit:]
        except OSError:
            return ""

    def run(self, argv, timeout, what=None, env=None, input=None):
        """Runs a command to completion within `timeout` seconds; raises StepFailed on failure."""
        try:
            completed = subprocess.run(argv, stdin=None if input is not None else subprocess.DEVNULL, input=input,
                                       capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            raise StepFailed(f"{what or argv[0]} did not finish within {timeout} s: {' '.join(argv)}")
        if completed.returncode != 0:
            raise StepFailed(f"{what or argv[0]} exited with {completed.returncode}: {' '.join(argv)}\n{completed.stderr[-3000:]}")
        return completed

    def bench_json(self, args, timeout):
        completed = self.run([self.bench] + args, timeout, what=f"pinset-bench {args[0]}")
        lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
        if not lines:
            raise StepFailed(f"pinset-bench {args[0]} printed no result:\n{completed.stderr[-2000:]}")
        return json.loads(lines[-1])

    # ----- pinset and nginx ----------------------------------------------------------------------------

    def init_data(self, name, key_type):
        directory = os.path.join(self.temp, name)
        self.run([self.pinset, "init", "--data-dir", directory, "--key-type", key_type, "--actor", "bench", "--json"],
                 timeout=120, what="pinset init")
        return directory

    def populate(self, directory, customers, batch=0):
        """Adds `customers` customers through PinStore: one transaction per row, or with `batch` > 0 that many
        customers per `importCustomers` transaction."""
        return self.bench_json(["populate", "--database", os.path.join(directory, "pinset.sqlite"), "--customers", str(customers)]
                               + (["--batch", str(batch)] if batch else []), timeout=1800)

    def measured_start(self, directory, name, customers, label, **start_options):
        """Starts `pinset serve`, checks that `customers` (numbers) are served, stops it; returns its start timings,
        RSS and startup signing pass. Every such start is one from nothing: the bundles an earlier start persisted are
        removed first, or the server would sign only what they lack."""
        persisted = os.path.join(directory, PERSISTED_BUNDLES)
        if os.path.exists(persisted):
            os.remove(persisted)
        server = self.start_pinset(directory, name=name, per_address_limit=False, **start_options)
        memory = proc_status(server.pid)
        for customer in customers:
            status, _, _ = http_get(server.port, f"/customer-{customer:05d}.json.signed")
            if status != 200:
                raise StepFailed(f"customer {customer} ({label}) answered {status}")
        code = self.stop(server)
        if code != 0:
            raise StepFailed(f"pinset serve ({label}) exited with {code} after SIGTERM:\n{self.tail(server.stderr_path)}")
        return dict(server.timings, rssKiB=memory.get("VmRSS", 0), peakRssKiB=memory.get("VmHWM", 0),
                    startupPassMs=self.startup_pass_ms(server))

    def start_pinset(self, directory, access_log=False, name="pinset", per_address_limit=True, monitoring=None,
                     reports=None, database=None, env=None, extra=None):
        config = {
            "host": "127.0.0.1", "port": 0, "dataDirectory": directory,
            "accessLog": access_log, "logLevel": "info", "logFormat": "text", "maxConnections": 4096,
        }
        if database is not None:
            config["database"] = database
        if monitoring is not None:
            config["monitoring"] = monitoring
        if reports is not None:
            config["reports"] = reports
        if not per_address_limit:
            # wrk's connections all come from 127.0.0.1; the default of 32 per address would refuse half of them.
            config["maxConnectionsPerAddress"] = 4096
        config.update(extra or {})
        config_path = os.path.join(self.temp, f"{name}-config.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        started = time.monotonic()
        process = self.start(name, [self.pinset, "serve", "--config", config_path], env=env)
        deadline = started + 300
        port = None
        while time.monotonic() < deadline:
            match = re.search(r"pinset listening on 127\.0\.0\.1:(\d+)", self.tail(process.stdout_path, limit=10**9))
            if match:
                port = int(match.group(1))
                break
            if process.poll() is not None:
                raise StepFailed(f"pinset serve exited with {process.returncode}:\n{self.tail(process.stderr_path)}{self.tail(process.stdout_path)}")
            time.sleep(0.002)
        if port is None:
            raise StepFailed("pinset serve did not print its port within 300 s")
        listening = time.monotonic()
        while time.monotonic() < deadline:
            try:
                status, _, _ = http_get(port, "/readyz", timeout=2)
                if status == 200:
                    break
            except OSError:
                pass
            if process.poll() is not None:
                raise StepFailed(f"pinset serve exited with {process.returncode}:\n{self.tail(process.stderr_path)}")
            time.sleep(0.002)
        else:
            raise StepFailed("pinset serve did not become ready within 300 s")
        ready = time.monotonic()
        process.port = port
        process.started = started
        process.timings = {"listeningSeconds": listening - started, "readySeconds": ready - started}
        return process

    def start_nginx(self, root, name="nginx", access_log_path=None):
        """nginx with two workers serving `root`, logging every request to `access_log_path` (combined format,
        buffered as operators configure it) or not at all."""
        prefix = os.path.join(self.temp, name)
        access_log = f"access_log {access_log_path} combined buffer=64k;" if access_log_path else "access_log off;"
        os.makedirs(os.path.join(prefix, "temp"), exist_ok=True)
        for attempt in range(5):
            port = free_port()
            config_path = os.path.join(prefix, "nginx.conf")
            user = "user root;\n" if os.geteuid() == 0 else ""
            with open(config_path, "w") as f:
                f.write(f"""{user}worker_processes 2;
daemon off;
master_process on;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    {access_log}
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    client_body_temp_path {prefix}/temp/body;
    proxy_temp_path {prefix}/temp/proxy;
    fastcgi_temp_path {prefix}/temp/fastcgi;
    uwsgi_temp_path {prefix}/temp/uwsgi;
    scgi_temp_path {prefix}/temp/scgi;
    types {{ application/pkcs7-mime signed; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ add_header Cache-Control "public, max-age=300"; }}
    }}
}}
""")
            process = self.start(name, ["/usr/sbin/nginx", "-p", prefix + "/", "-c", config_path, "-e", os.path.join(prefix, "error.log")])
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    http_get(port, "/", timeout=1)
                    process.port = port
                    return process
                except OSError:
                    time.sleep(0.01)
            self.stop(process)
            log(f"nginx did not start on port {port} (attempt {attempt + 1}): {self.tail(os.path.join(prefix, 'error.log'), 500)}")
        raise StepFailed("nginx did not start")

    def wrk(self, port, path, close=False, seconds=None, headers=()):
        seconds = seconds or self.sizes["wrk_seconds"]
        argv = ["wrk", f"-t{WRK_THREADS}", f"-c{WRK_CONNECTIONS}", f"-d{seconds}s", "--latency", "--timeout", "5s"]
        if close:
            argv += ["-H", "Connection: close"]
        for header in headers:
            argv += ["-H", header]
        argv.append(f"http://127.0.0.1:{port}{path}")
        completed = self.run(argv, timeout=seconds + 60, what="wrk")
        result = parse_wrk(completed.stdout)
        if result.get("requests", 0) == 0:
            raise StepFailed("wrk completed no request:\n" + completed.stdout)
        return result

    def start_dispatch_floor(self, body_bytes):
        floor = self.start("dispatch-floor", [self.bench, "dispatch-floor", "--body-bytes", str(body_bytes)])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and floor.poll() is None:
            match = re.search(r"dispatch floor listening on 127\.0\.0\.1:(\d+)", self.tail(floor.stdout_path, limit=10**6))
            if match:
                floor.port = int(match.group(1))
                return floor
            time.sleep(0.01)
        raise StepFailed("pinset-bench dispatch-floor did not start:\n" + self.tail(floor.stderr_path))

    def profile_close(self, path, targets):
        """Where each server's CPU goes under `Connection: close` load: `perf record` of the server process during
        one wrk run, summed by shared object (kernel, libdispatch, Swift runtime, libc, the binary itself), plus
        the heaviest symbols. Empty when perf is missing or not permitted."""
        perf = shutil.which("perf")
        if perf is None:
            log("perf is not installed; the Connection: close profile is skipped")
            return {}
        profiles = {}
        seconds = self.sizes["wrk_seconds"]
        for target, process in targets.items():
            data = os.path.join(self.temp, f"perf-{target}.data")
            recorder = self.start(f"perf-{target}", [perf, "record", "-F", "1999", "-g", "-o", data, "-p", str(process.pid),
                                                     "--", "sleep", str(seconds)])
            time.sleep(0.3)
            self.wrk(process.port, path, close=True, seconds=seconds)
            self.stop(recorder, sig=signal.SIGINT, timeout=seconds + 30)
            if not os.path.exists(data):
                log(f"perf recorded nothing for {target}: {self.tail(recorder.stderr_path, 500)}")
                return {}
            profiles[target] = {
                "byObject": perf_shares(self.run([perf, "report", "-i", data, "--stdio", "--no-children", "--sort", "dso"],
                                                 timeout=120, what="perf report").stdout, limit=8),
                "bySymbol": perf_shares(self.run([perf, "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,sym"],
                                                 timeout=120, what="perf report").stdout, limit=12),
            }
            log(f"{target} close profile: " + ", ".join(f"{name} {share:.0f} %" for name, share in profiles[target]["byObject"]))
        return profiles

    @staticmethod
    def wall_time(monotonic):
        return time.time() - (time.monotonic() - monotonic)

    def wait_for_persisted(self, server, persisted, since, pass_ms, label):
        """Waits for `persisted` to have been written at or after `since` (seconds since the epoch; 0.1 s allowed
        for the file system's coarser clock), within twice the pass's time or 30 s."""
        bound = max(30, 2 * pass_ms / 1000)
        deadline = time.monotonic() + bound
        while self.file_mtime(persisted) < since - 0.1:
            if time.monotonic() > deadline:
                raise StepFailed(f"{label}: {persisted} was not written within {bound:.0f} s of a full pass's log line")
            if server.poll() is not None:
                raise StepFailed(f"pinset serve ({label}) exited with {server.returncode}:\n{self.tail(server.stderr_path)}")
            time.sleep(LOG_POLL_SECONDS)

    @staticmethod
    def pass_bound(previous_start, interval, previous_ms):
        """Seconds from now within which the scheduled pass after one that started by `previous_start` (monotonic)
        must have logged its line: the interval and one refresher tick, then four times the previous pass or a minute."""
        return max(1.0, previous_start + interval + 1 - time.monotonic()) + max(60, 4 * previous_ms / 1000)

    @staticmethod
    def file_mtime(path):
        """The file's modification time (seconds since the epoch), 0 while it does not exist."""
        try:
            return os.stat(path).st_mtime
        except FileNotFoundError:
            return 0

    def stop_cleanly(self, server, label):
        code = self.stop(server)
        if code != 0:
            raise StepFailed(f"pinset serve ({label}) exited with {code} after SIGTERM:\n{self.tail(server.stderr_path)}")

    def log_lines(self, server, message, **fields):
        """The `key=value` fields of every text log line of `server` with `message` whose fields include `fields`."""
        found = []
        for line in self.tail(server.stdout_path, 10**9).splitlines():
            at = line.find(": " + message)
            rest = line[at + 2 + len(message):] if at >= 0 else None
            if rest is None or (rest and not rest.startswith(" ")):
                continue
            values = {key: (value[1:-1] if value.startswith('"') else value)
                      for key, value in re.findall(r'([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|\S*)', rest)}
            if all(values.get(key) == value for key, value in fields.items()):
                found.append(values)
        return found

    def wait_for_log(self, server, message, timeout, what, count=1, **fields):
        """Waits up to `timeout` seconds for the `count`-th log line with `message` and `fields`; returns its fields
        and when it was seen (monotonic)."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.log_lines(server, message, **fields)
            if len(lines) >= count:
                return lines[count - 1], time.monotonic()
            if server.poll() is not None:
                raise StepFailed(f"pinset serve ({what}) exited with {server.returncode}:\n{self.tail(server.stderr_path)}")
            if time.monotonic() > deadline:
                wanted = " ".join([message] + [f"{k}={v}" for k, v in fields.items()])
                raise StepFailed(f"pinset serve ({what}) logged no '{wanted}' (number {count}) within {timeout:.0f} s:\n"
                                 f"{self.tail(server.stdout_path)}")
            time.sleep(LOG_POLL_SECONDS)

    def startup_pass_ms(self, server):
        """The first signing pass's duration from the server's own log line (fields are logged in key order)."""
        match = re.search(r"customers=(\d+) duration_ms=(\d+)[^\n]* reason=startup", self.tail(server.stdout_path, 10**7))
        return int(match.group(2)) if match else None

    # ----- the whole run -------------------------------------------------------------------------------

    # ----- PostgreSQL ----------------------------------------------------------------------------------

    def start_postgres(self, name="postgres"):
        """The PostgreSQL 15 cluster the tests start (`TestPostgresServer`, through `pinset-bench postgres`): its own
        temporary directory, 127.0.0.1 only at a free port, password (SCRAM) authentication, a login role `pinset`,
        run as the `postgres` user when the suite runs as root. Its passwords come through a 0600 file that is read
        and removed at once. Stopped by pinset-bench's pid (SIGTERM), which stops the postmaster by its pid."""
        root = os.path.join(self.temp, name)
        os.makedirs(root, mode=0o700)
        passwords_file = os.path.join(root, "passwords.json")
        process = self.start(name, [self.bench, "postgres", "--passwords-file", passwords_file])
        # Its fast shutdown writes a checkpoint (durable settings): more time than a server needs to stop.
        process.stop_timeout = 60
        # initdb, then up to five ports tried with 30 s each for readiness.
        deadline = time.monotonic() + 300
        started = None
        while time.monotonic() < deadline and process.poll() is None:
            lines = [line for line in self.tail(process.stdout_path, limit=10**6).splitlines(keepends=True)
                     if line.startswith("{") and line.endswith("\n")]
            if lines:
                started = json.loads(lines[-1])
                break
            time.sleep(0.05)
        if started is None:
            self.stop(process)
            raise StepFailed(f"pinset-bench postgres did not start PostgreSQL:\n{self.tail(process.stderr_path)}")
        process.after_stop = [lambda: self.reap_postgres(started)]
        with open(passwords_file) as f:
            passwords = json.load(f)
        os.remove(passwords_file)
        self.postgres = {"process": process, "port": started["port"], "superuserPassword": passwords["superuserPassword"],
                         "password": passwords["password"]}
        match = re.search(r"\d+\.\d+", started["version"])
        version = f"PostgreSQL {match.group(0) if match else started['version']}"
        log(f"{version} on 127.0.0.1:{started['port']} (pid {started['postmasterPid']})")
        return version

    @staticmethod
    def reap_postgres(started):
        """After pinset-bench postgres has ended: a postmaster it could not stop (it was killed itself) is killed by
        its pid, and the cluster's directory removed."""
        pid, data = started["postmasterPid"], started["dataDirectory"]
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                ours = data.encode() in f.read()
        except OSError:
            ours = False
        if ours:
            log(f"PostgreSQL (pid {pid}) outlived pinset-bench postgres; killing it")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            for _ in range(100):
                if not os.path.exists(f"/proc/{pid}"):
                    break
                time.sleep(0.1)
        shutil.rmtree(os.path.dirname(data), ignore_errors=True)

    def psql(self, sql):
        """Runs `sql` as the cluster's superuser over TCP."""
        self.run([os.path.join(POSTGRES_BIN, "psql"), "-X", "-w", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                  "-p", str(self.postgres["port"]), "-U", "postgres", "-d", "postgres", "-f", "-"],
                 timeout=60, what="psql", input=sql,
                 env=dict(os.environ, PGPASSWORD=self.postgres["superuserPassword"], PGCONNECT_TIMEOUT="5"))

    def postgres_env(self):
        """What an operator's shell holds: the role's password in PGPASSWORD, never in the URL or an argument."""
        return dict(os.environ, PGPASSWORD=self.postgres["password"])

    def deployment(self, customers):
        """A SQLite data directory with `customers` customers (the scale step's if it has that many) and the same
        deployment copied by `pinset store copy` into a new PostgreSQL database."""
        if customers in self.deployments:
            return self.deployments[customers]
        if customers in self.scale_deployments:
            directory, populate_seconds = self.scale_deployments[customers], None
        else:
            directory = self.init_data(f"postgres-sqlite-{customers}", "p256")
            populate_seconds = self.populate(directory, customers)["seconds"]
        database = f"pinset_{customers}"
        self.psql(f"CREATE DATABASE {database} OWNER {POSTGRES_ROLE} ENCODING 'UTF8';")
        url = f"postgres://{POSTGRES_ROLE}@127.0.0.1:{self.postgres['port']}/{database}"
        sqlite = os.path.join(directory, "pinset.sqlite")
        began = time.monotonic()
        self.run([self.pinset, "store", "copy", "--from", sqlite, "--to", url], timeout=1800, what="pinset store copy",
                 env=self.postgres_env())
        copy_seconds = time.monotonic() - began
        log(f"{customers} customers copied from SQLite to PostgreSQL in {copy_seconds:.2f} s")
        self.deployments[customers] = {"directory": directory, "sqlite": sqlite, "url": url, "customers": customers,
                                       "populateSeconds": populate_seconds, "copySeconds": copy_seconds}
        return self.deployments[customers]

    def instance_directory(self, source, name):
        """A data directory of one more instance: copies of the signing key (0600) and the trust certificate."""
        directory = os.path.join(self.temp, name)
        os.makedirs(directory, mode=0o700)
        for file, mode in (("signing-key.pem", 0o600), ("trust-cert.pem", 0o644), ("trust-cert.der", 0o644)):
            target = os.path.join(directory, file)
            shutil.copyfile(os.path.join(source, file), target)
            os.chmod(target, mode)
        return directory

    def backend_start(self, deployment, backend):
        """Full signing pass, `allPinSets()` and time-to-ready of one backend, medians of the runs."""
        database = deployment["sqlite"] if backend == "sqlite" else deployment["url"]
        env = self.postgres_env() if backend == "postgresql" else None
        completed = self.run([self.bench, "load", "--database", database, "--repeat", "3"], timeout=600,
                             what="pinset-bench load", env=env)
        load = json.loads([line for line in completed.stdout.splitlines() if line.startswith("{")][-1])
        if load["customers"] != deployment["customers"]:
            raise StepFailed(f"allPinSets() on {backend} returned {load['customers']} customers, not {deployment['customers']}")
        runs = []
        for run_number in range(self.sizes["postgres_runs"]):
            last = deployment["customers"]
            runs.append(self.measured_start(deployment["directory"], f"pinset-{backend}-start-{run_number}", [last], backend,
                                            database=database, env=env))
            log(f"{backend} {last} customers: ready in {runs[-1]['readySeconds']:.3f} s, startup pass {runs[-1]['startupPassMs']} ms")
        def median(key):
            values = [r[key] for r in runs if r[key] is not None]
            return statistics.median(values) if values else None
        return {"allPinSetsSeconds": load["seconds"]["median"], "listeningSeconds": median("listeningSeconds"),
                "readySeconds": median("readySeconds"), "startupPassMs": median("startupPassMs"), "rssKiB": median("rssKiB"),
                "runs": runs}

    def machine(self):
        def first_line(argv):
            try:
                completed = subprocess.run(argv, capture_output=True, text=True, timeout=30)
                return (completed.stdout or completed.stderr).strip().splitlines()[0]
            except (OSError, IndexError, subprocess.TimeoutExpired):
                return "unknown"
        cpu = "unknown"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            memory_kib = int(f.readline().split()[1])
        commit = first_line(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain"], capture_output=True, text=True, timeout=30).stdout.strip() != ""
        return {
            "nproc": os.cpu_count(), "cpu": cpu, "memoryGiB": round(memory_kib / 1024 / 1024, 1),
            "kernel": platform.release(), "swift": first_line(["swift", "--version"]),
            "nginx": first_line(["/usr/sbin/nginx", "-v"]), "wrk": first_line(["wrk", "-v"]).split(" Copyright")[0],
            "openssl": first_line(["openssl", "version"]), "sqlite": first_line(["sqlite3", "--version"]).split(" ")[0],
            "python": platform.python_version(), "gitCommit": commit + (" (with uncommitted changes)" if dirty else ""),
            "buildConfiguration": self.options.configuration,
        }

    def wait_for_idle(self):
        limit = self.options.wait_for_idle
        deadline = time.monotonic() + limit
        while limit and os.getloadavg()[0] > 1.0 and time.monotonic() < deadline:
            log(f"waiting for the machine to go idle (1-min load {os.getloadavg()[0]:.1f})")
            time.sleep(10)

    def cleanup(self):
        self.stop_all()
        if self.temp:
            shutil.rmtree(self.temp, ignore_errors=True)
            self.temp = None

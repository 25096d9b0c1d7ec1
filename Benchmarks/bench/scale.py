"""Step `scale`: time to ready, from nothing and from persisted bundles, and steady and peak RSS at 1,000 to
100,000 customers."""

import os
import shutil
import statistics
import time

from .common import LOG_POLL_SECONDS, PERSISTED_BUNDLES, RSS_SPLIT, StepFailed, http_get, log, proc_status


class ScaleSteps:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_scale(self):
        """For growing numbers of customers in one data directory: time to ready from nothing and from the bundles
        the last server persisted, RSS once ready, the steady RSS and the peak during a scheduled full pass."""
        sizes = self.sizes
        directory = self.init_data("scale", "p256")
        results = []
        have = 0
        for size in sizes["scale_sizes"]:
            batch = sizes["scale_batch"] if size > sizes["scale_per_row_max"] else 0
            populate = self.populate(directory, size - have, batch=batch)
            have = size
            load = self.bench_json(["load", "--database", os.path.join(directory, "pinset.sqlite"), "--repeat", "3"], timeout=600)
            base, per_customer = sizes["scale_resign_seconds"]
            interval = round(base + per_customer * size, 1)
            runs = []
            for run_number in range(sizes["scale_runs"]):
                run = self.scale_run(directory, size, run_number, interval)
                runs.append(run)
                log(f"scale {size}: ready in {run['fromNothing']['readySeconds']:.3f} s from nothing, "
                    f"{run['fromPersisted']['readySeconds']:.3f} s from persisted ({run['fromPersisted']['kept']} kept); "
                    f"steady RSS {run['steadyRssKiB']} KiB, scheduled-pass peak {run['schedulePeakKiB']} KiB")
            if size == sizes["postgres_customers"] and size != sizes["scale_sizes"][-1]:
                # The PostgreSQL step reuses this size; the scale step goes on growing its own directory.
                kept = os.path.join(self.temp, f"scale-{size}")
                shutil.copytree(directory, kept, ignore=shutil.ignore_patterns(PERSISTED_BUNDLES))
                self.scale_deployments[size] = kept
            def median(values):
                values = [v for v in values if v is not None]
                return statistics.median(values) if values else None
            def medians(part):
                return {key: median(r[part].get(key) for r in runs) for key in runs[0][part]}
            results.append({
                "customers": size, "populateSeconds": populate["seconds"], "populateMode": populate["mode"],
                "populateBatch": populate["batch"], "populateTransactions": populate["transactions"],
                "allPinSetsSeconds": load["seconds"]["median"], "resignIntervalSeconds": interval,
                "fromNothing": medians("fromNothing"), "fromPersisted": medians("fromPersisted"),
                **{key: median(r.get(key) for r in runs) for key in
                   ("steadyRssKiB", "steadyRssAnonKiB", "steadyRssFileKiB", "schedulePeakKiB", "schedulePeakAtLogLineKiB", "afterScheduleRssKiB",
                    "schedulePassMs", "persistedFileBytes")},
                # Ratios per run, then the median: the peak and the steady RSS of one run belong together.
                "schedulePeakRatio": median(r["schedulePeakKiB"] / r["steadyRssKiB"] for r in runs),
                "startupPeakRatio": median(r["fromNothing"]["peakRssKiB"] / r["steadyRssKiB"] for r in runs),
                "persistedStartPeakRatio": median(r["fromPersisted"]["peakRssKiB"] / r["steadyRssKiB"] for r in runs),
                "runs": runs,
            })
        self.results["steps"]["scale"] = results
        self.scale_deployments[have] = directory

    def scale_run(self, directory, size, run_number, interval):
        """One start from nothing (the persisted bundles removed first), measured through its first scheduled full
        pass and stopped; then a start from the bundles that server persisted."""
        label = f"{size} customers, run {run_number + 1}"
        persisted = os.path.join(directory, PERSISTED_BUNDLES)
        if os.path.exists(persisted):
            os.remove(persisted)
        # `persistBundles` is on by default; naming it makes a server that does not persist refuse the key (its
        # configuration rejects unknown keys) instead of passing a second start from nothing off as one from the file.
        extra = {"resignIntervalSeconds": interval, "persistBundles": True}
        customers = sorted({1, size})
        load = os.getloadavg()[0]
        server = self.start_pinset(directory, name=f"pinset-scale-{size}-{run_number}-nothing", per_address_limit=False, extra=extra)
        from_nothing = dict(self.ready_figures(server, customers, label), loadAverage1m=load)
        scheduled = self.scheduled_pass(server, interval, persisted, label)
        self.stop_cleanly(server, label)
        if not os.path.exists(persisted):
            raise StepFailed(f"pinset serve ({label}) left no {persisted} after its passes and a clean stop")
        file_bytes = os.path.getsize(persisted)

        label = f"{size} customers, run {run_number + 1}, from persisted bundles"
        load = os.getloadavg()[0]
        server = self.start_pinset(directory, name=f"pinset-scale-{size}-{run_number}-persisted", per_address_limit=False, extra=extra)
        from_persisted = dict(self.ready_figures(server, customers, label), loadAverage1m=load)
        # Logged before the server listens; the bound only covers the log line reaching the file.
        loaded, _ = self.wait_for_log(server, "Persisted bundles loaded", timeout=10, what=label)
        # "Persisted bundles read" times reading and checking the file, before the startup pass ("loaded") that
        # compares its bundles with the store and signs the rest.
        read = self.log_lines(server, "Persisted bundles read")
        from_persisted.update(persistedBundles=int(loaded["bundles"]), kept=int(loaded["kept"]),
                              persistedLoadMs=int(loaded["duration_ms"]),
                              persistedReadMs=int(read[0]["duration_ms"]) if read and "duration_ms" in read[0] else None)
        self.stop_cleanly(server, label)
        return {"fromNothing": from_nothing, "fromPersisted": from_persisted, "persistedFileBytes": file_bytes, **scheduled}

    def ready_figures(self, server, customers, label):
        """Once a server is ready: its RSS and peak RSS, every customer in `customers` answered 200, and its startup
        signing pass from its log."""
        memory = proc_status(server.pid)
        body = b""
        for customer in customers:
            status, _, body = http_get(server.port, f"/customer-{customer:05d}.json.signed")
            if status != 200:
                raise StepFailed(f"customer {customer} ({label}) answered {status}")
        startup = self.log_lines(server, "Signed bundles", reason="startup")
        return dict(server.timings, rssKiB=memory.get("VmRSS"), peakRssKiB=memory.get("VmHWM"), bundleBytes=len(body),
                    startupPassMs=int(startup[0]["duration_ms"]) if startup else None,
                    signedAtStart=int(startup[0]["signed"]) if startup and "signed" in startup[0] else None)

    def scheduled_pass(self, server, interval, persisted, label):
        """The steady RSS between passes, then the peak RSS (VmHWM, reset after the steady reading) of the next
        scheduled full pass, read once the pass has logged its line and its bundles are persisted."""
        settle = self.sizes["scale_settle_seconds"]
        # The steady reading and the reset must come before the next pass can start, with this much to spare.
        margin = min(1.0, interval / 4)
        # A scheduled pass starts resignIntervalSeconds after the start of the pass before it (at the refresher's
        # next tick), and the startup pass started no earlier than the exec.
        earliest_next = server.started + interval
        latest_previous_start = server.started + server.timings["listeningSeconds"]
        startup = self.log_lines(server, "Signed bundles", reason="startup")
        previous_ms = int(startup[0]["duration_ms"]) if startup else 0
        # The server writes the file after a pass, off the pass's thread: the startup pass's write belongs to the
        # start, not to the steady state. The file was removed before this start, so any file is this server's.
        self.wait_for_persisted(server, persisted, self.wall_time(server.started), previous_ms, label)
        seen = 0
        for attempt in range(3):
            if time.monotonic() + settle <= earliest_next - margin:
                break
            if attempt == 2:
                raise StepFailed(f"{label}: passes of {previous_ms} ms leave no {settle} s between passes at resignIntervalSeconds "
                                 f"{interval}; raise scale_resign_seconds in Benchmarks/bench/common.py")
            # The previous pass left no time for a steady reading before the next one: read after the one that comes.
            log(f"{label}: the next scheduled pass may start within {settle} s; reading the steady RSS after it")
            line, seen_at = self.wait_for_log(server, "Signed bundles", reason="schedule", count=seen + 1,
                                              timeout=self.pass_bound(latest_previous_start, interval, previous_ms), what=label)
            seen += 1
            previous_ms = int(line["duration_ms"])
            began = seen_at - LOG_POLL_SECONDS - previous_ms / 1000
            self.wait_for_persisted(server, persisted, self.wall_time(began), previous_ms, label)
            latest_previous_start = seen_at
            earliest_next = began + interval
        time.sleep(settle)
        steady = proc_status(server.pid, RSS_SPLIT)
        seen = len(self.log_lines(server, "Signed bundles", reason="schedule"))
        try:
            with open(f"/proc/{server.pid}/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current RSS (proc(5))
        except OSError as error:
            raise StepFailed(f"{label}: cannot reset the peak RSS through /proc/{server.pid}/clear_refs: {error}")
        load = os.getloadavg()[0]
        line, seen_at = self.wait_for_log(server, "Signed bundles", reason="schedule", count=seen + 1,
                                          timeout=self.pass_bound(latest_previous_start, interval, previous_ms), what=label)
        # Read as the line is seen too: the file is written after it, off the pass's thread, so the two readings
        # tell the pass's own peak (nearly: the write may have begun) from that of writing the file.
        at_line = proc_status(server.pid)
        # Writing the file is part of the pass's cost: the peak is read once it is written.
        pass_ms = int(line["duration_ms"])
        self.wait_for_persisted(server, persisted, self.wall_time(seen_at - LOG_POLL_SECONDS - pass_ms / 1000), pass_ms, label)
        after = proc_status(server.pid)
        return {
            "steadyRssKiB": steady.get("VmRSS"), "steadyRssAnonKiB": steady.get("RssAnon"), "steadyRssFileKiB": steady.get("RssFile"),
            "schedulePeakKiB": after.get("VmHWM"), "schedulePeakAtLogLineKiB": at_line.get("VmHWM"),
            "afterScheduleRssKiB": after.get("VmRSS"),
            "schedulePassMs": pass_ms, "scheduleSigned": int(line["signed"]) if "signed" in line else None,
            "loadAverageAtSchedule": load, "scheduledPassesBeforeSteady": seen,
        }

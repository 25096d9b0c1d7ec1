"""The report: BENCHMARKS.md's results section and Benchmarks/results/latest.md rendered from a results JSON, and
the merge of some steps' results into an earlier run's."""

import json
import os

from . import access_log, admin_flood, first_start, transparency_log
from .common import BEGIN_MARKER, END_MARKER, SERVING_TARGETS, StepFailed


def fmt_us(value):
    if value is None:
        return "–"
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.0f} µs"


def fmt_s(value):
    if value is None:
        return "–"
    return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.0f} ms"


def fmt_mib(kib):
    return "–" if not kib else f"{kib / 1024:.1f} MiB"


def verdict(met):
    return "met" if met else "**missed**"


def render(results):
    lines = []
    machine = results["machine"]
    lines += [
        f"Run: {results['startedAt']} ({results['mode']} mode), commit {machine['gitCommit']}, {machine['buildConfiguration']} build.",
        f"Machine: {machine['nproc']} cores ({machine['cpu']}), {machine['memoryGiB']} GiB, Linux {machine['kernel']}; "
        f"{machine['swift']}; {machine['nginx']}; {machine['wrk']}; {machine['openssl']}; SQLite {machine['sqlite']}.",
        f"1-minute load average at start {results['loadAverageAtStart'][0]:.2f}, at end {results['loadAverageAtEnd'][0]:.2f}.",
        "",
    ]
    steps = results["steps"]
    if "serving" in steps:
        s = steps["serving"]
        runs = s["runs"]
        lines += [
            "### 1. Serving one signed bundle",
            "",
            f"`wrk -t{s['wrkThreads']} -c{s['wrkConnections']} -d{s['wrkSeconds']}s --latency`, median of {s['rounds']} rounds by requests/s; "
            f"body {s['served']['pinsetBodyBytes']} bytes (Pinset) / {s['served']['nginxBodyBytes']} bytes (nginx, the file `pinset sign --out` wrote); "
            f"Pinset access log off; wrk and the server share the 2 cores.",
            "",
            "| connections | server | requests/s | p50 | p99 | server CPU | errors | Pinset / nginx | target |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for mode, label in (("keepalive", "64 keep-alive"), ("close", "`Connection: close`")):
            for target in ("pinset", "pinsetDispatch", "nginx"):
                if f"{target}-{mode}" not in runs:
                    continue  # results from before the Dispatch transport
                r = runs[f"{target}-{mode}"]
                if target == "pinsetDispatch":
                    lines.append(
                        f"| {label} | Pinset, Dispatch transport | {r['requestsPerSecond']:,.0f} | "
                        f"{fmt_us(r.get('p50Microseconds'))} | {fmt_us(r.get('p99Microseconds'))} | {r['serverCpuPercent']:.0f} % | "
                        f"{r['socketErrors'] + r['non2xx']} | {runs[f'ratioDispatch-{mode}']:.2f} | – |"
                    )
                    continue
                ratio = runs[f"ratio-{mode}"]
                lines.append(
                    f"| {label} | {'Pinset' if target == 'pinset' else 'nginx (2 workers)'} | {r['requestsPerSecond']:,.0f} | "
                    f"{fmt_us(r.get('p50Microseconds'))} | {fmt_us(r.get('p99Microseconds'))} | {r['serverCpuPercent']:.0f} % | "
                    f"{r['socketErrors'] + r['non2xx']} | "
                    + ((f"**{ratio:.2f}** | {SERVING_TARGETS[mode][0]}: {verdict(ratio >= SERVING_TARGETS[mode][1])}" if SERVING_TARGETS[mode]
                        else f"**{ratio:.2f}** | ≥ 0.95 × the Dispatch loop: see below") if target == "pinset" else " | ")
                    + " |"
                )
        if "notModified" in s:
            n = s["notModified"]
            for target in ("pinset", "pinsetDispatch", "nginx"):
                if target not in n:
                    continue
                r = n[target]
                cpu = f"{r['serverCpuPercent']:.0f} %" if "serverCpuPercent" in r else "–"
                name = {"pinset": "Pinset", "pinsetDispatch": "Pinset, Dispatch transport", "nginx": "nginx (2 workers)"}[target]
                if target == "pinsetDispatch":
                    ratio = r["requestsPerSecond"] / n["nginx"]["requestsPerSecond"]
                    lines.append(
                        f"| 64 keep-alive, `If-None-Match` → 304 | {name} | {r['requestsPerSecond']:,.0f} | "
                        f"{fmt_us(r.get('p50Microseconds'))} | {fmt_us(r.get('p99Microseconds'))} | {cpu} | "
                        f"{r['socketErrors'] + r['non2xx']} | {ratio:.2f} | – |"
                    )
                    continue
                lines.append(
                    f"| 64 keep-alive, `If-None-Match` → 304 | {name} | "
                    f"{r['requestsPerSecond']:,.0f} | {fmt_us(r.get('p50Microseconds'))} | {fmt_us(r.get('p99Microseconds'))} | {cpu} | "
                    f"{r['socketErrors'] + r['non2xx']} | "
                    + (f"**{n['ratio']:.2f}** | {SERVING_TARGETS['notModified'][0]}: {verdict(n['ratio'] >= SERVING_TARGETS['notModified'][1])}" if target == "pinset" else " | ")
                    + " |"
                )
        if "floor-close" in runs:
            d = runs["floor-close"]
            lines.append(
                f"| `Connection: close` | minimal Dispatch loop (accept, one read, one send, close) | {d['requestsPerSecond']:,.0f} | "
                f"{fmt_us(d.get('p50Microseconds'))} | {fmt_us(d.get('p99Microseconds'))} | {d['serverCpuPercent']:.0f} % | "
                f"{d['socketErrors'] + d['non2xx']} | {runs['close-floorOverNginx']['median']:.2f} (floor / nginx) | – |"
            )
            lines += [
                "",
                "`Connection: close`, per round (the three servers measured back to back): Pinset / Dispatch floor "
                + ", ".join(f"{r:.2f}" for r in runs["close-pinsetOverFloor"]["all"])
                + f" (median **{runs['close-pinsetOverFloor']['median']:.2f}**, target ≥ 0.95: {verdict(runs['close-pinsetOverFloor']['median'] >= 0.95)}); floor / nginx "
                + ", ".join(f"{r:.2f}" for r in runs["close-floorOverNginx"]["all"])
                + f" (median **{runs['close-floorOverNginx']['median']:.2f}**). Server CPU per request: "
                + ", ".join(f"{name} {runs[key]['serverCpuMicrosecondsPerRequest']:.1f} µs"
                            for name, key in (("Pinset", "pinset-close"), ("floor", "floor-close"), ("nginx", "nginx-close")))
                + ".",
            ]
        if "roundRatios" in s.get("notModified", {}):
            n = s["notModified"]
            lines += [
                "",
                "`If-None-Match` → 304, per round (measured in the same rounds): Pinset / nginx "
                + ", ".join(f"{r:.2f}" for r in n["roundRatios"]) + f" (median **{n['ratio']:.2f}**); Pinset's 304s / its own "
                "keep-alive 200s of the round " + ", ".join(f"{r:.2f}" for r in n["roundRatiosOverOwn200"])
                + f" (median **{n['overOwn200']:.2f}**, target ≥ 1.0, a 304 never dearer than a 200: {verdict(n['overOwn200'] >= 1.0)}).",
            ]
        if s.get("closeProfile"):
            lines += ["", "Where the CPU goes under `Connection: close` (`perf record -g` of the server during one wrk run, "
                      "self time by shared object):", "",
                      "| server | " + " | ".join(["1st", "2nd", "3rd", "4th", "5th"]) + " |",
                      "| --- | --- | --- | --- | --- | --- |"]
            for target, label in (("pinset", "Pinset"), ("floor", "Dispatch floor")):
                rows = s["closeProfile"][target]["byObject"][:5]
                lines.append(f"| {label} | " + " | ".join(f"{name} {share:.0f} %" for name, share in rows)
                             + " |" * (6 - len(rows) - 1) + " |")
        if "floodGoodClient" in s:
            f = s["floodGoodClient"]
            lines += [
                "",
                f"Good client under a one-address flood ({f['attackerConnections']:,} silent connections from 127.0.0.2, "
                f"{f['probes']} sequential fetches from 127.0.0.3): {f['ok']}/{f['probes']} answered 200, p50 "
                f"{fmt_us(f['p50Microseconds'])}, slowest {fmt_us(f['maxMicroseconds'])} (target: all 200 within 1 s: "
                f"{verdict(f['ok'] == f['probes'] and f['maxMicroseconds'] < 1e6)}).",
            ]
        if "features" in s:
            f = s["features"]
            lines += [
                "",
                "Keep-alive with the host monitor, uptake counting (`Pinset-Version` sent), per-address admission and the "
                f"reports listener on, against the same server with them off, in {len(f['rounds'])} rounds of "
                f"{f.get('seconds', s['wrkSeconds'])} s each, the order alternating (on / off requests/s): "
                + ", ".join(f"{r['on']['requestsPerSecond']:,.0f} / {r['off']['requestsPerSecond']:,.0f}" for r in f["rounds"])
                + f"; median ratio **{f['medianRatio']:.2f}** (target ≥ 0.90: {verdict(f['medianRatio'] >= 0.9)})"
                + (f", pooled {f['pooledRatio']:.2f}" if "pooledRatio" in f else "") + ".",
            ]
        a = s["accessLogOn"]
        lines += [
            "",
            f"Pinset peak RSS (VmHWM) after all serving runs: {fmt_mib(s['pinsetPeakRssKiB'])} "
            f"(nginx master + workers: {fmt_mib(s['nginxPeakRssKiBAllProcesses'])}). "
            f"With the access log on (to a file, {a['logBytes'] / 1e6:.0f} MB written): {a['requestsPerSecond']:,.0f} requests/s keep-alive, "
            f"p99 {fmt_us(a.get('p99Microseconds'))} — {a['relativeToAccessLogOff'] * 100:.0f} % of the access-log-off rate.",
            "",
        ]
    if "signing" in steps:
        lines += [
            "### 2. Re-signing: one full pass (`SigningPass.run`, both cores), 5 hosts × 3 pins per customer",
            "",
            "A pass as the server runs it every five minutes: unchanged customers reuse their encoded pin content and",
            "are only re-signed; the first pass after start also encodes every customer (its own column).",
            "",
            "| key | customers | pass (median) | fastest | first pass after start | per customer | bundle | target | |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
        ]
        for key_type, label, target in (("p256", "ECDSA P-256", 1.0), ("rsa4096", "RSA-4096", 30.0)):
            r = steps["signing"][key_type]
            for p in r["passes"]:
                is_target = p["customers"] == 10000
                lines.append(
                    f"| {label} | {p['customers']:,} | {fmt_s(p['seconds']['median'])} | {fmt_s(p['seconds']['min'])} | "
                    f"{fmt_s(p['firstPassSeconds']) if 'firstPassSeconds' in p else '–'} | "
                    f"{fmt_us(p['perCustomerMs'] * 1000)} | {p['averageBundleBytes']:,} B | "
                    + (f"< {target:.0f} s | {verdict(p['seconds']['median'] < target)}" if is_target else " | ")
                    + " |"
                )
        if "mixed" in steps["signing"]:
            m = steps["signing"]["mixed"]
            lines += [
                "",
                f"Mixed keys: 1 customer in {m['ownEvery']} signs with its own {m['ownKeyType']} key (one key file each, "
                f"looked up through `SigningIdentityDirectory`), the others with the default {m['defaultKeyType']} key. "
                "Expected = the same customers priced at the single-key passes above.",
                "",
                "| customers | own keys | pass (median) | first pass (parses every key file) | per customer | expected per customer |",
                "| ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for p in m["passes"]:
                lines.append(
                    f"| {p['customers']:,} | {p['ownKeyCustomers']:,} | {fmt_s(p['seconds']['median'])} | {fmt_s(p['firstPassSeconds'])} | "
                    f"{fmt_us(p['perCustomerMs'] * 1000)} | {fmt_us(p.get('expectedPerCustomerMs', 0) * 1000)} |"
                )
        lines += [
            "",
            "Against the original signer (one `openssl smime -sign` process per customer, one after another), same payloads, same run:",
            "",
            "| key | openssl per customer | Pinset, one thread (encode + sign) | Pinset, full pass per customer | openssl / Pinset (one thread) | openssl / Pinset (pass) |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for key_type, label in (("p256", "ECDSA P-256"), ("rsa4096", "RSA-4096")):
            r = steps["signing"][key_type]
            single = r["singleThread"]
            lines.append(
                f"| {label} | {r['openssl']['perCustomerMs']:.2f} ms ({r['openssl']['customers']} customers) | "
                f"{fmt_us((single['encodeMsPerCustomer'] + single['signMsPerCustomer']) * 1000)} "
                f"({single['encodeMsPerCustomer'] * 1000:.0f} µs encode + {fmt_us(single['signMsPerCustomer'] * 1000)} sign) | "
                f"{fmt_us(r['passes'][-1]['perCustomerMs'] * 1000)} | {r['ratios']['opensslOverOneThreadPerCustomer']:.1f}× | "
                f"{r['ratios']['opensslOverPassPerCustomer']:.1f}× |"
            )
        lines.append("")
    if "client" in steps:
        lines += [
            "### 3. Client: verify and apply one bundle",
            "",
            "`BundleVerifier.verify` (signature, chain, payload, freshness) and `PinsetUpdater.update()` with an in-memory fetcher "
            "(verify + atomic, fsynced state-file write + install), each a fresh version.",
            "",
            "| key | hosts | bundle | verify median | verify p99 | update median | update p99 | allocations per verify | per update |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in steps["client"]:
            allocations = r.get("allocations")
            def alloc(mode):
                if not allocations:
                    return "–"
                a = allocations[mode]
                return f"{a['blocks']:,.0f} ({a['bytes'] / 1024:,.0f} KiB)"
            lines.append(
                f"| {'ECDSA P-256' if r['keyType'] == 'p256' else 'RSA-4096'} | {r['hosts']} | {r['bundleBytes']:,} B | "
                f"{fmt_us(r['verifySeconds']['median'] * 1e6)} | {fmt_us(r['verifySeconds']['p99'] * 1e6)} | "
                f"{fmt_us(r['updateSeconds']['median'] * 1e6)} | {fmt_us(r['updateSeconds']['p99'] * 1e6)} | "
                f"{alloc('verify')} | {alloc('update')} |"
            )
        lines.append("")
    if "scale" in steps:
        lines += render_scale(steps["scale"])
    if "monitoring" in steps:
        m = steps["monitoring"]
        lines += [
            f"### 5. Serving while the host monitor checks {m['hosts']:,} hosts",
            "",
            f"The same `wrk` run against one bundle, with monitoring off and with every host checked continuously (a pass "
            f"every second, at most {m['concurrency']} connections at once, each to a loopback listener that holds it "
            f"{m['holdSeconds'] * 1000:.0f} ms and closes it, so every host is unreachable).",
            "",
            "| monitoring | requests/s | p50 | p99 | monitor passes | last pass | check connections | most at once |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for mode in ("off", "on"):
            r = m["runs"][mode]
            extra = (f"{r['passes']} | {fmt_s(r['lastPassMilliseconds'] / 1000) if r.get('lastPassMilliseconds') is not None else '–'} | "
                     f"{r['checkConnections']:,} | {r['peakCheckConnections']}") if mode == "on" else "– | – | – | –"
            lines.append(f"| {mode} | {r['requestsPerSecond']:,.0f} | {fmt_us(r.get('p50Microseconds'))} | {fmt_us(r.get('p99Microseconds'))} | {extra} |")
        lines.append("")
    if "reports" in steps:
        runs = steps["reports"]["runs"]
        lines += [
            "### 6. Serving while pin-failure reports flood in",
            "",
            "The same `wrk` run against one bundle, without and with a second `wrk` (1 thread, 16 connections) POSTing "
            "TrustKit-shaped reports, each from another installation, to the reports listener as fast as it answers; the "
            "rate limit is raised out of the way. Reports stored = the sum `pinset reports` shows afterwards; it must equal "
            "the reports counted.",
            "",
            "| report flood | bundle requests/s | p50 | p99 | reports/s | reports stored |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for mode in ("off", "on"):
            r = runs[mode]
            extra = f"{r['reportsPerSecond']:,.0f} | {r['reportsStored']:,}" if mode == "on" else "– | –"
            lines.append(f"| {mode} | {r['requestsPerSecond']:,.0f} | {fmt_us(r.get('p50Microseconds'))} | {fmt_us(r.get('p99Microseconds'))} | {extra} |")
        lines.append("")
    if "postgres" in steps:
        p = steps["postgres"]
        names = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
        lines += [
            f"### 7. PostgreSQL beside SQLite ({p['postgres']} on the same machine, over 127.0.0.1)",
            "",
            f"The same {p['customers']:,}-customer deployment (P-256, 5 hosts × 3 pins each) in a SQLite file and, copied by "
            f"`pinset store copy` (in {fmt_s(p['copySeconds'][str(p['customers'])])}), in PostgreSQL; `pinset serve` started "
            f"{p['runs']} × on each, medians.",
            "",
            "| | " + " | ".join(names.values()) + " |",
            "| --- | ---: | ---: |",
        ]
        b = p["backends"]
        for label, render_value in (
            ("`allPinSets()` (median of 3)", lambda r: fmt_s(r["allPinSetsSeconds"])),
            ("startup signing pass (server log)", lambda r: fmt_s(r["startupPassMs"] / 1000) if r["startupPassMs"] is not None else "–"),
            ("`exec` to listening", lambda r: fmt_s(r["listeningSeconds"])),
            ("`exec` to first `/readyz` 200", lambda r: fmt_s(r["readySeconds"])),
            ("RSS when ready", lambda r: fmt_mib(r["rssKiB"])),
        ):
            lines.append(f"| {label} | " + " | ".join(render_value(b[backend]) for backend in names) + " |")
        lines += [
            "",
            f"Edit to served on every instance: {p['propagation'][0]['instances']} `pinset serve` instances on the same database "
            "(own data directories, copies of one key); time from `pinset pin add` returning until all of them serve the "
            "bundle with the edit's content version.",
            "",
            "| customers | edits | " + " | ".join(f"{n} median | {n} p99 | {n} max" for n in names.values()) + " | target: median and p99 < 2 s |",
            "| ---: | ---: | " + " | ".join("---: | ---: | ---:" for _ in names) + " | --- |",
        ]
        for r in p["propagation"]:
            met = ", ".join(f"{n} {verdict(r[backend]['median'] < 2 and r[backend]['p99'] < 2)}" for backend, n in names.items())
            lines.append(
                f"| {r['customers']:,} | {r['edits']} | "
                + " | ".join(f"{fmt_s(r[backend]['median'])} | {fmt_s(r[backend]['p99'])} | {fmt_s(r[backend]['max'])}" for backend in names)
                + f" | {met} |"
            )
        lines.append("")
    if "report-flood" in steps:
        f = steps["report-flood"]
        names = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
        lines += [
            "### 8. Admin edits during a report flood",
            "",
            f"`pinset pin add` while {f['addresses']} client addresses (PROXY protocol headers on the reports listener) each send "
            f"distinct reports at the per-address limit ({f['perAddressPerMinute']} a minute), with {f['storedRows']:,} rows already "
            "stored for the customer and hour. Target: every edit succeeds, p99 under 1 s.",
            "",
            "| backend | edits | failed | p50 | p99 | slowest | reports/s accepted | target |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for backend, name in names.items():
            r = f["runs"][backend]
            met = verdict(r["failedEdits"] == 0 and r["p99Seconds"] is not None and r["p99Seconds"] < 1)
            lines.append(f"| {name} | {r['edits']} | {r['failedEdits']} | {fmt_s(r['p50Seconds'])} | {fmt_s(r['p99Seconds'])} | "
                         f"{fmt_s(r['maxSeconds'])} | {r['reportsPerSecond']:,.1f} | {met} |")
        lines.append("")
    if "review" in steps:
        r = steps["review"]
        served, approval = r["approveToServed"], r["approval"]
        lines += [
            "### 9. Edit to served through the admin API, with two-person review",
            "",
            f"{r['changes']} changes of one customer (SQLite, one instance): an editor proposes a pin edit "
            "(`POST …/pins`, a change request), a reviewer approves it (`POST …/approve`: the live-chain check, then "
            "the write), and the bundle is fetched until it carries the approved version. Measured from sending the "
            "approval. Target: under 2 s, median and p99.",
            "",
            "| | median | p99 | slowest | target |",
            "| --- | ---: | ---: | ---: | --- |",
            f"| approval sent → new version served | {fmt_s(served['median'])} | {fmt_s(served['p99'])} | {fmt_s(served['max'])} | "
            f"{verdict(served['median'] < 2 and served['p99'] < 2)} |",
            f"| the approval call alone | {fmt_s(approval['median'])} | {fmt_s(approval['p99'])} | {fmt_s(approval['max'])} | |",
            "",
        ]
    if "access-log" in steps:
        lines += access_log.render(steps["access-log"], verdict)
    if "admin-flood" in steps:
        lines += admin_flood.render(steps["admin-flood"], fmt_s, verdict)
    if "transparency" in steps:
        lines += transparency_log.render(steps["transparency"], fmt_s, fmt_us, verdict)
    if "first-start" in steps:
        lines += first_start.render(steps["first-start"], verdict)
    if results.get("separateRuns"):
        lines += ["Merged in from another run (`--merge`): " + "; ".join(
            f"{name}: {run['startedAt']}, commit {run['gitCommit']}, {run['buildConfiguration']} build, 1-minute load average "
            f"{run['loadAverageAtStart'][0]:.2f} at start, {run['loadAverageAtEnd'][0]:.2f} at end"
            for name, run in sorted(results["separateRuns"].items())) + ".", ""]
    if results["failures"]:
        lines += ["### Failed steps", ""] + [f"- {f['step']}: {f['error'].splitlines()[0]}" for f in results["failures"]] + [""]
    return "\n".join(lines)


def fmt_kib(kib):
    return "–" if kib is None else f"{kib:.1f} KiB"


def fmt_range(values):
    low, high = min(values), max(values)
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"


def fmt_ratio(value):
    return "–" if value is None else f"{value:.2f}"


SCALE_TARGET_CUSTOMERS = 100000


def render_scale(scale):
    """Section 4: time to ready from nothing and from persisted bundles, steady and peak RSS."""
    if "fromNothing" not in scale[0]:
        return render_scale_before_persisted(scale)
    runs = len(scale[0]["runs"])
    lines = [
        "### 4. Scale: server start with N customers (P-256, 5 hosts × 3 pins each)",
        "",
        f"{runs} run{'' if runs == 1 else 's'} per size, each a start from nothing (the persisted bundles removed; the server "
        "signs every bundle before it listens), kept running through its first scheduled full pass and stopped, then a start "
        "from the bundles it persisted. Time from `exec` of `pinset serve` to the first `/readyz` 200; medians of the runs. "
        "The 1-minute load average is read before each start.",
        "",
        "| customers | populate (PinStore) | `allPinSets()` | ready from nothing | its pass | ready from persisted | "
        "file read + its pass | bundles kept / persisted | signed at that start | persisted file | load at the starts |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in scale:
        nothing, persisted = r["fromNothing"], r["fromPersisted"]
        mode = "per row" if r["populateMode"] == "perRow" else f"{r['populateBatch']:,} per transaction"
        loads = [run[part]["loadAverage1m"] for run in r["runs"] for part in ("fromNothing", "fromPersisted")]
        lines.append(
            f"| {r['customers']:,} | {fmt_s(r['populateSeconds'])} ({mode}) | {fmt_s(r['allPinSetsSeconds'])} | "
            f"{fmt_s(nothing['readySeconds'])} | {fmt_s(nothing['startupPassMs'] / 1000) if nothing['startupPassMs'] is not None else '–'} | "
            f"{fmt_s(persisted['readySeconds'])} | "
            f"{'–' if persisted.get('persistedReadMs') is None else fmt_s(persisted['persistedReadMs'] / 1000)} + "
            f"{fmt_s(persisted['persistedLoadMs'] / 1000)} | "
            f"{persisted['kept']:,.0f} / {persisted['persistedBundles']:,.0f} | "
            f"{'–' if persisted['signedAtStart'] is None else format(persisted['signedAtStart'], ',.0f')} | "
            f"{r['persistedFileBytes'] / 1024 / 1024:,.1f} MiB | {fmt_range(loads)} |"
        )
    lines += [
        "",
        "Populate: \"per row\" is one durable transaction per customer, per host and per host's pins (11 per customer, as the "
        "CLI writes them); \"N per transaction\" is `PinStore.importCustomers` with the same rows. Neither is part of a "
        "measured start.",
        "",
    ]
    # Results from before the reading at the log line was taken have none: then neither the column nor its note.
    at_line = any(r.get("schedulePeakAtLogLineKiB") is not None for r in scale)
    lines += [
        "Memory (`VmRSS`/`VmHWM` from `/proc/PID/status`): once ready; steady = after ready and a short settle; then the peak "
        "is reset (`clear_refs` 5) and read again once the next scheduled full pass has logged its line and its bundles are "
        "persisted (the server writes the file after the line, on another thread)"
        + (", and as the line is seen (in parentheses: the pass itself, with at most the start of the write)." if at_line else "."),
        "",
        "| customers | RSS ready (from nothing) | peak during that start | steady | peak during a scheduled pass "
        + ("(by its log line) " if at_line else "") + "| that pass | "
        "scheduled peak ÷ steady | startup peak ÷ steady | RSS ready (from persisted) | peak during that start |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in scale:
        nothing, persisted = r["fromNothing"], r["fromPersisted"]
        lines.append(
            f"| {r['customers']:,} | {fmt_mib(nothing['rssKiB'])} | {fmt_mib(nothing['peakRssKiB'])} | {fmt_mib(r['steadyRssKiB'])} | "
            f"{fmt_mib(r['schedulePeakKiB'])}{' (' + fmt_mib(r.get('schedulePeakAtLogLineKiB')) + ')' if at_line else ''} | "
            f"{fmt_s(r['schedulePassMs'] / 1000)} | "
            f"{fmt_ratio(r['schedulePeakRatio'])} | "
            f"{fmt_ratio(r['startupPeakRatio'])} | {fmt_mib(persisted['rssKiB'])} | {fmt_mib(persisted['peakRssKiB'])} |"
        )
    base = scale[0]
    per_customer = {}
    for r in scale[1:]:
        per_customer[r["customers"]] = (r["steadyRssKiB"] - base["steadyRssKiB"]) / (r["customers"] - base["customers"])
    bundle = scale[-1]["fromNothing"]["bundleBytes"]
    if per_customer:
        lines += ["", f"Steady RSS per customer above the {base['customers']:,}-customer start — " + "; ".join(
            f"{customers:,}: {fmt_kib(kib)}" for customers, kib in per_customer.items())
            + f". One bundle is {bundle:,.0f} bytes ({bundle / 1024:.1f} KiB) here; the server reads each from its spool "
            f"file per request (`pread`, never mapped), so the bundles' bytes are in the page cache, not in `VmRSS`."
            + (f" Of the steady RSS at {scale[-1]['customers']:,}, {fmt_mib(scale[-1]['steadyRssAnonKiB'])} is anonymous memory and "
               f"{fmt_mib(scale[-1]['steadyRssFileKiB'])} file pages (the binary, its libraries and any mapped file)."
               if scale[-1].get("steadyRssAnonKiB") is not None else "")]
    runs_text = []
    for r in scale:
        if r["customers"] >= 10000:
            runs_text.append(f"{r['customers']:,}: " + ", ".join(
                f"{fmt_s(run['fromNothing']['readySeconds'])} / {fmt_s(run['fromPersisted']['readySeconds'])}" for run in r["runs"]))
    if runs_text:
        lines += ["", "Ready per run (from nothing / from persisted) — " + "; ".join(runs_text) + "."]
    top = scale[-1]
    if top["customers"] == SCALE_TARGET_CUSTOMERS:
        ratio = max(v for v in (top["schedulePeakRatio"], top["startupPeakRatio"]) if v is not None)
        kib = per_customer.get(top["customers"])
        lines += ["", f"Targets at {top['customers']:,} customers: ready from persisted ≤ 3 s: "
                  f"{fmt_s(top['fromPersisted']['readySeconds'])}, {verdict(top['fromPersisted']['readySeconds'] <= 3)}; "
                  f"from nothing ≤ 30 s: {fmt_s(top['fromNothing']['readySeconds'])}, {verdict(top['fromNothing']['readySeconds'] <= 30)}; "
                  f"peak ≤ 1.25 × steady during any pass: {fmt_ratio(top['schedulePeakRatio'])} scheduled, "
                  f"{fmt_ratio(top['startupPeakRatio'])} starting from nothing, {verdict(ratio <= 1.25)}; "
                  f"steady ≤ 4 KiB per customer above the 1-customer start: {fmt_kib(kib)}, "
                  f"{verdict(kib is not None and kib <= 4)}."]
    else:
        lines += ["", f"The start-up targets are set at {SCALE_TARGET_CUSTOMERS:,} customers; this run's largest size is "
                  f"{top['customers']:,}, so none is judged."]
    return lines + [""]


def render_scale_before_persisted(scale):
    """Section 4 from results of runs before the server persisted its bundles (one kind of start only)."""
    lines = [
        "### 4. Scale: server start with N customers (P-256, 5 hosts × 3 pins each)",
        "",
        "Time from `exec` of `pinset serve` to its \"listening\" line and to the first `/readyz` 200 (the server signs every "
        "bundle before it listens), and its RSS once ready; medians of the runs.",
        "",
        "| customers | to listening | to ready | startup signing pass | `allPinSets()` | RSS when ready | peak RSS | populate (PinStore API) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in scale:
        lines.append(
            f"| {r['customers']:,} | {fmt_s(r['listeningSeconds'])} | {fmt_s(r['readySeconds'])} | "
            f"{fmt_s(r['startupPassMs'] / 1000) if r['startupPassMs'] is not None else '–'} | {fmt_s(r['allPinSetsSeconds'])} | "
            f"{fmt_mib(r['rssKiB'])} | {fmt_mib(r['peakRssKiB'])} | {fmt_s(r['populateSeconds'])} |"
        )
    base = scale[0]
    growth = []
    for r in scale[1:]:
        extra = r["customers"] - base["customers"]
        growth.append(
            f"{r['customers']:,}: {(r['readySeconds'] - base['readySeconds']) / extra * 1e6:.0f} µs and "
            f"{(r['rssKiB'] - base['rssKiB']) * 1024 / extra / 1024:.1f} KiB per customer above the {base['customers']}-customer baseline"
        )
    lines += ["", "Marginal cost per customer — " + "; ".join(growth) + ".", ""]
    return lines


def update_markdown(path, section):
    with open(path) as f:
        text = f.read()
    begin, end = text.find(BEGIN_MARKER), text.find(END_MARKER)
    if begin < 0 or end < begin:
        raise StepFailed(f"{path} lacks the result markers")
    text = text[: begin + len(BEGIN_MARKER)] + "\n\n" + section.rstrip() + "\n\n" + text[end:]
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def merged_into(path, results):
    """The results at `path` with the steps of `results` in place of theirs, each marked with the run it came from."""
    with open(path) as f:
        merged = json.load(f)
    for name, step in results["steps"].items():
        merged["steps"][name] = step
        merged.setdefault("stepSeconds", {})[name] = results["stepSeconds"][name]
        merged.setdefault("separateRuns", {})[name] = {
            "startedAt": results["startedAt"], "gitCommit": results["machine"]["gitCommit"],
            # A step that builds for itself (first-start) names its own configuration.
            "buildConfiguration": (step.get("buildConfiguration") if isinstance(step, dict) else None)
            or results["machine"]["buildConfiguration"],
            "loadAverageAtStart": results["loadAverageAtStart"], "loadAverageAtEnd": results["loadAverageAtEnd"],
        }
    return merged

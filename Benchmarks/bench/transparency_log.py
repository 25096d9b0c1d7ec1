"""Step `transparency` of the benchmark suite: what the transparency log (docs/transparency.md)
costs.

- Appends: `pinset-bench log-append` imports `transparency_customers` customers through `PinStore.importCustomers`
  (`transparency_batch` per transaction, one log entry each), then makes `transparency_edits` single edits (`addPins`,
  one transaction and one entry each), on SQLite and, in full mode, on PostgreSQL 15; then times a publisher's first
  `advance()` over that store's whole log (what a server start runs before it serves).
- Signing pass: `pinset-bench log-sign-pass` runs `SigningPass.run` over the SQLite store's customers in alternating
  rounds without and with what the log adds to each pass of the server's refresher (`advance()` over the entry an
  edit just appended, and the check that the served checkpoint covers every bundle).
- Proof and client: `pinset-bench log-proof` generates a log of `transparency_entries` entries in memory, publishes it
  with two witnesses (`PinsetWitness.Witness`, state in SQLite) and a quorum of two, and reports the first `advance()`
  (the whole-log rehash of a start), the size of the proofs served beside the bundles (target: proof, checkpoint and
  two cosignatures ≤ 1.5 KiB at 1,000,000 entries), and `PinsetUpdater.update()` with and without a transparency
  policy (bundle and proof served from memory).
"""

import json
import os

from .common import StepFailed, log

PROOF_TARGET_BYTES = 1536
PROOF_TARGET_ENTRIES = 1_000_000


def step(suite):
    """Runs the step on `suite` (the suite's harness) and stores its results under steps["transparency"]."""
    sizes = suite.sizes
    directory = suite.init_data("transparency", "p256")
    sqlite = os.path.join(directory, "pinset.sqlite")
    append_args = ["--customers", str(sizes["transparency_customers"]), "--edits", str(sizes["transparency_edits"]),
                   "--batch", str(sizes["transparency_batch"])]
    appends = {"sqlite": suite.bench_json(["log-append", "--database", sqlite] + append_args, timeout=1800)}
    log_append_line("SQLite", appends["sqlite"], log)
    postgres = None
    if sizes["transparency_postgres"]:
        if suite.postgres is None or suite.postgres["process"].poll() is not None:
            postgres = suite.start_postgres(name="postgres-transparency")
        database = "pinset_transparency"
        suite.psql(f"CREATE DATABASE {database} OWNER pinset ENCODING 'UTF8';")
        url = f"postgres://pinset@127.0.0.1:{suite.postgres['port']}/{database}"
        completed = suite.run([suite.bench, "log-append", "--database", url] + append_args, timeout=1800,
                              what="pinset-bench log-append (PostgreSQL)", env=suite.postgres_env())
        lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
        if not lines:
            raise StepFailed(f"pinset-bench log-append on PostgreSQL printed no result:\n{completed.stderr[-2000:]}")
        appends["postgresql"] = json.loads(lines[-1])
        log_append_line("PostgreSQL", appends["postgresql"], log)

    sign_pass = suite.bench_json(["log-sign-pass", "--data-dir", directory, "--database", sqlite,
                                  "--repeat", str(sizes["transparency_pass_rounds"])], timeout=1800)
    log(f"signing pass at {sign_pass['customers']} customers: log off {sign_pass['logOffSeconds']['median']:.3f} s, "
        f"on {sign_pass['logOnSeconds']['median']:.3f} s")

    proof = suite.bench_json(["log-proof", "--entries", str(sizes["transparency_entries"]),
                              "--customers", str(sizes["transparency_log_customers"]), "--data-dir", directory,
                              "--work-dir", suite.temp, "--witnesses", "2",
                              "--iterations", str(sizes["transparency_client_iterations"])], timeout=3600)
    if proof["proofBytes"]["min"] <= 0 or proof["checkpointBytes"] <= 0:
        raise StepFailed(f"log-proof reported no proof: {proof}")
    log(f"{proof['entries']:,} entries: proof {proof['proofBytes']['min']}–{proof['proofBytes']['max']} bytes, "
        f"rehash {proof['startupRehash']['seconds']:.2f} s, client update with proof "
        f"{proof['client']['updateWithProofSeconds']['median'] * 1e6:.0f} µs")
    suite.results["steps"]["transparency"] = {
        "postgres": postgres, "appends": appends, "signPass": sign_pass, "proof": proof,
        "proofTargetBytes": PROOF_TARGET_BYTES, "proofTargetEntries": PROOF_TARGET_ENTRIES,
    }


def log_append_line(backend, result, log):
    log(f"{backend}: {result['importEntriesPerSecond']:,.0f} entries/s imported, {result['editEntriesPerSecond']:,.0f} "
        f"entries/s by single edits; rehash of {result['logSize']:,} entries {result['startupRehash']['seconds']:.3f} s")


def render(result, fmt_s, fmt_us, verdict):
    """The step's section of BENCHMARKS.md's results, as lines."""
    appends, sign_pass, proof = result["appends"], result["signPass"], result["proof"]
    first = appends["sqlite"]
    lines = [
        "### 11. Transparency log",
        "",
        f"Appends through `PinStore`: {first['customersImported']:,} customers imported with `importCustomers` "
        f"({first['importBatch']:,} per transaction, one entry each), then {first['edits']:,} single edits (`addPins`, one "
        "durable transaction and one entry each; the rate is the edit's, with its audit entry and version). Then a "
        "publisher's first `advance()` over that store's whole log, as a server start runs it: read every entry, "
        "parse and rehash it, compare the root with the store's, sign the checkpoint.",
        "",
        "| backend | entries/s, imports | entries/s, single edits | log size | first `advance()` at start | entries/s | RSS it adds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for backend, label in (("sqlite", "SQLite"), ("postgresql", result.get("postgres") or "PostgreSQL")):
        if backend not in appends:
            continue
        a = appends[backend]
        r = a["startupRehash"]
        lines.append(f"| {label} | {a['importEntriesPerSecond']:,.0f} | {a['editEntriesPerSecond']:,.0f} | {a['logSize']:,} | "
                     f"{fmt_s(r['seconds'])} | {r['entriesPerSecond']:,.0f} | {r['rssGrowthKiB'] / 1024:.1f} MiB |")
    met = proof["entries"] < result["proofTargetEntries"] or proof["proofBytes"]["max"] <= result["proofTargetBytes"]
    target = (f"≤ {result['proofTargetBytes']:,} bytes at {result['proofTargetEntries']:,} entries: "
              + (verdict(met) if proof["entries"] >= result["proofTargetEntries"] else "not at this size"))
    rehash = proof["startupRehash"]
    client = proof["client"]
    with_proof, without = client["updateWithProofSeconds"]["median"], client["updateSeconds"]["median"]
    lines += [
        "",
        f"A log of {proof['entries']:,} entries ({proof['customers']:,} customers × {proof['versionsPerCustomer']} versions; "
        "generated in memory, customer-00001's entries from real pin sets), published with "
        f"{proof['witnesses']} witnesses (`PinsetWitness.Witness`, the code of `pinset witness serve`, without HTTP) and a "
        f"quorum of {proof['witnesses']}. The proof is the `/<customer>.json.proof` body: c2sp.org/tlog-proof with the "
        "inclusion path and the checkpoint with the log's signature and the cosignatures, for the first, a middle and "
        "the last customer at their first and latest versions.",
        "",
        "| entries | proof served beside a bundle | inclusion path | checkpoint with signatures | target |",
        "| ---: | ---: | ---: | ---: | --- |",
        f"| {proof['entries']:,} | {proof['proofBytes']['min']:,}–{proof['proofBytes']['max']:,} bytes | "
        f"{proof['inclusionPathHashes']['min']}–{proof['inclusionPathHashes']['max']} hashes | {proof['checkpointBytes']:,} bytes | {target} |",
        "",
        f"Start with that log: the publisher's first `advance()` (parse and rehash every entry, build the proof index, "
        f"compare roots, sign, two witnesses cosign) took {fmt_s(rehash['seconds'])} ({rehash['entriesPerSecond']:,.0f} "
        f"entries/s) and added {rehash['rssGrowthKiB'] / 1024:.0f} MiB of RSS; reading the entries from the store comes on "
        "top (the table above gives that rate at its size).",
        "",
        f"Client (`PinsetUpdater.update()`, {client['keyType']} bundle of {client['hosts']} hosts, {client['bundleBytes']:,} "
        f"bytes, {client['iterations']} updates each to a new version, bundle and proof served from memory, state file "
        "written each time; the checkpoint is the one the client already holds, so no tiles are fetched):",
        "",
        "| | median | p99 |",
        "| --- | ---: | ---: |",
        f"| update without a transparency policy | {fmt_us(without * 1e6)} | {fmt_us(client['updateSeconds']['p99'] * 1e6)} |",
        f"| update requiring inclusion under a checkpoint cosigned by 2 witnesses | {fmt_us(with_proof * 1e6)} | "
        f"{fmt_us(client['updateWithProofSeconds']['p99'] * 1e6)} |",
        f"| the proof check alone (parse, log signature, 2 cosignatures, path) | {fmt_us(client['proofVerifySeconds']['median'] * 1e6)} | "
        f"{fmt_us(client['proofVerifySeconds']['p99'] * 1e6)} |",
        "",
        f"Signing pass at {sign_pass['customers']:,} customers ({sign_pass['keyType']}, `SigningPass.run` as the refresher "
        f"calls it, {sign_pass['rounds']} alternating rounds, one edit before each): with the log on, the pass also runs "
        "`advance()` over the new entry and checks that the served checkpoint covers each bundle.",
        "",
        "| log | pass (median) | of which `advance()` | of which the coverage check | on ÷ off |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| off | {fmt_s(sign_pass['logOffSeconds']['median'])} | | | |",
        f"| on | {fmt_s(sign_pass['logOnSeconds']['median'])} | {fmt_us(sign_pass['advanceSeconds']['median'] * 1e6)} | "
        f"{fmt_us(sign_pass['coversSeconds']['median'] * 1e6)} | {sign_pass['onOverOff']:.3f} |",
        "",
    ]
    return lines


class TransparencyStep:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_transparency(self):
        """The transparency log's appends, proof size, client verification and signing-pass cost."""
        step(self)

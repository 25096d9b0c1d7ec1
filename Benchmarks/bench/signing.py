"""Steps `signing` (one full re-signing pass per key type and size) and `client` (the client library's
verification time and heap allocations per operation)."""

import os
import subprocess

from .common import MALLOC_DEBUG_LIBRARY, StepFailed


class SigningSteps:
    """Mixed into the suite's `Suite` with the harness (bench/harness.py)."""

    def step_signing(self):
        sizes = self.sizes
        sizes_arg = ",".join(str(n) for n in sizes["sign_sizes"])
        results = {}
        for key_type, repeat in (("p256", sizes["sign_repeat_p256"]), ("rsa4096", sizes["sign_repeat_rsa"])):
            directory = self.init_data(f"signing-{key_type}", key_type)
            results[key_type] = self.bench_json([
                "sign-pass", "--data-dir", directory, "--customers", sizes_arg, "--repeat", str(repeat),
                "--openssl", str(sizes["openssl_customers"]), "--work-dir", self.temp,
            ], timeout=3600)
            openssl = results[key_type]["openssl"]["perCustomerMs"]
            single = results[key_type]["singleThread"]
            results[key_type]["ratios"] = {
                "opensslOverPassPerCustomer": openssl / results[key_type]["passes"][-1]["perCustomerMs"],
                "opensslOverOneThreadPerCustomer": openssl / (single["encodeMsPerCustomer"] + single["signMsPerCustomer"]),
            }
        # Half the customers on their own RSA-4096 key, half on the default P-256 key, as the server resolves them.
        mixed = self.bench_json([
            "sign-pass", "--data-dir", os.path.join(self.temp, "signing-p256"), "--customers", sizes_arg,
            "--repeat", str(sizes["sign_repeat_rsa"]), "--single-thread-sample", "1", "--work-dir", self.temp,
            "--own-key-data-dir", os.path.join(self.temp, "signing-rsa4096"), "--own-every", "2",
        ], timeout=3600)["mixed"]
        for p in mixed["passes"]:
            # What the same customers cost if each key type's pass were run on its own: the mix should cost no more.
            own, default = p["ownKeyCustomers"], p["customers"] - p["ownKeyCustomers"]
            rsa = next(q for q in results["rsa4096"]["passes"] if q["customers"] == p["customers"])["perCustomerMs"]
            ec = next(q for q in results["p256"]["passes"] if q["customers"] == p["customers"])["perCustomerMs"]
            p["expectedPerCustomerMs"] = (own * rsa + default * ec) / p["customers"]
        results["mixed"] = mixed
        self.results["steps"]["signing"] = results

    def step_client(self):
        sizes = self.sizes
        results = []
        for key_type in ("p256", "rsa4096"):
            directory = os.path.join(self.temp, f"signing-{key_type}")
            if not os.path.exists(directory):
                directory = self.init_data(f"signing-{key_type}", key_type)
            for hosts in sizes["client_hosts"]:
                common = ["--data-dir", directory, "--hosts", str(hosts), "--work-dir", self.temp]
                result = self.bench_json(["client"] + common + ["--iterations", str(sizes["client_iterations"])], timeout=900)
                if sizes["allocations"] and os.path.exists(MALLOC_DEBUG_LIBRARY):
                    result["allocations"] = {mode: self.allocations_per_operation(common, mode) for mode in ("verify", "update")}
                results.append(result)
        self.results["steps"]["client"] = results

    def allocations_per_operation(self, common, mode, iterations=10):
        """Heap allocations of one operation, counted by glibc's mtrace over `iterations` operations."""
        trace = os.path.join(self.temp, f"mtrace-{mode}.txt")
        environment = dict(os.environ, LD_PRELOAD=MALLOC_DEBUG_LIBRARY, MALLOC_TRACE=trace)
        try:
            completed = subprocess.run([self.bench, "client-alloc"] + common + ["--mode", mode, "--iterations", str(iterations)],
                                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600, env=environment)
        except subprocess.TimeoutExpired:
            raise StepFailed("pinset-bench client-alloc did not finish within 600 s")
        if completed.returncode != 0:
            raise StepFailed(f"pinset-bench client-alloc exited with {completed.returncode}:\n{completed.stderr[-2000:]}")
        blocks = total_bytes = 0
        with open(trace) as f:
            for line in f:
                # "@ caller + 0xADDRESS 0xSIZE" (malloc, calloc) and "@ caller > 0xADDRESS 0xSIZE" (realloc).
                fields = line.split()
                if len(fields) >= 5 and fields[2] in ("+", ">"):
                    blocks += 1
                    total_bytes += int(fields[4], 16)
        os.remove(trace)
        return {"blocks": blocks / iterations, "bytes": total_bytes / iterations}

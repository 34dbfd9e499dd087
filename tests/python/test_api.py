"""The Python package on NumPy callables, in process: a matmul through NumPy's BLAS placed against
the FMA roof, an elementwise chain unfused and fused (chunked, so its intermediates stay in cache),
both in one run; the results folder read by roofbench's own commands (report, compare, merge with a
C++ run of the same machine); and the declaration errors Benchmark refuses."""
import gzip
import json
import lzma
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import roofbench as rb

BIN = os.environ["ROOFBENCH_BIN"]
# 256: OpenBLAS reaches a third to seven tenths of the FMA roof there (at 512 up to nine tenths, close
# enough for a roof measured in a throttled moment to refuse it, and this test to fail on a timing
# verdict it is not about: the gate's own tests plant their kernels far above or below their roofs).
N = 256
M = 1 << 22
CHUNK = 1 << 14


def matmul_inputs(seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, (N, N)).astype(np.float32), rng.uniform(0, 1, (N, N)).astype(np.float32)


def matmul_reference(a, b):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def chain_inputs(seed):
    # x in [0.5, 4]: y = sin²x + cos²x + x = 1 + x stays away from 0, so an FP32 chain's few
    # roundings are a few units of its last place, not a cancellation's.
    return (np.random.default_rng(seed).uniform(0.5, 4, M).astype(np.float32),)


def chain_reference(x):
    x = x.astype(np.float64)
    return (np.sin(x) ** 2 + np.cos(x) ** 2 + x).astype(np.float32)


def chain_unfused(x):
    return np.sin(x) ** 2 + np.cos(x) ** 2 + x  # five passes, every intermediate through memory


def chain_fused(x):
    y = np.empty_like(x)
    for i in range(0, len(x), CHUNK):  # each chunk's intermediates stay in cache
        c = x[i:i + CHUNK]
        s, co = np.sin(c), np.cos(c)
        np.multiply(s, s, out=s)
        np.multiply(co, co, out=co)
        np.add(s, co, out=s)
        np.add(s, c, out=y[i:i + CHUNK])
    return y


class Api(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.rb_run = rb.run([
            rb.Benchmark(np.matmul, matmul_inputs, matmul_reference, "numpy/matmul/fp32", flops=2 * N**3,
                         bytes=3 * 4 * N * N, params={"n": N}, growth=N**0.5),
            rb.Benchmark(chain_unfused, chain_inputs, chain_reference, "numpy/chain_unfused/fp32", flops=5 * M,
                         bytes=8 * M, params={"n": M}, growth=4),
            rb.Benchmark(chain_fused, chain_inputs, chain_reference, "numpy/chain_fused/fp32", flops=5 * M,
                         bytes=8 * M, params={"n": M}, growth=4, compared_with="numpy/chain_unfused/fp32"),
        ], device="cpu", quick=True, out=os.path.join(cls.tmp.name, "py"),
            options=["--skip", "ceiling/(dram_(read|write|copy|memcpy|triad)|l2|l3|fp64|math_)", "--budget", "0.4"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_benchmark_is_checked_twice_timed_and_placed(self):
        self.assertEqual(self.rb_run.exit_code, 0)
        for r in self.rb_run.results:
            self.assertTrue(r.ok, r)
            self.assertTrue(r.record["recheck"]["ok"], r.name)  # checked again after the samples
            self.assertGreater(r.samples, 0)
            self.assertGreater(r.roof_pct, 0)

    def test_the_matmul_is_placed_against_the_fma_roof(self):
        r = self.rb_run["numpy/matmul/fp32"]
        self.assertEqual(r.name, f"numpy/matmul/fp32/n:{N}")
        self.assertEqual(r.bound, "compute")
        self.assertEqual(r.record["placement"]["compute_ceiling"], "fp32_fma")

    def test_the_chains_are_a_lesson_of_one_run(self):
        fused = self.rb_run["numpy/chain_fused/fp32"]
        self.assertEqual(fused.record["compared_with"], "numpy/chain_unfused/fp32")
        with open(os.path.join(self.rb_run.folder, "summary.md")) as f:
            summary = f.read()
        self.assertIn("numpy/chain_fused/fp32", summary.split("**Lessons**")[1])

    def test_roofbench_reads_the_folder_and_merges_it_with_a_cpp_run(self):
        out = os.path.join(self.tmp.name, "written")
        self.rb_run.write(out)
        self.assertTrue(os.path.exists(os.path.join(out, "report.html")))
        subprocess.run([BIN, "report", out, "--out", os.path.join(self.tmp.name, "report")], check=True)
        subprocess.run([BIN, "compare", out, out], check=True, capture_output=True)
        cpp = os.path.join(self.tmp.name, "cpp")
        # The naive GEMM, a few percent of the borrowed FMA roof: merging is under test, not the
        # plausibility gate (saxpy sits near the DRAM roof measured beside the other tests).
        subprocess.run([BIN, "run", "--device", "cpu", "--quick", "--filter", "^gemm/naive/fp32/M:256/",
                        "--ceilings-from", out, "--out", cpp], check=True, capture_output=True)
        merged = os.path.join(self.tmp.name, "merged")
        subprocess.run([BIN, "merge", out, cpp, "--out", merged], check=True, capture_output=True)
        with open(os.path.join(merged, "results.json")) as f:
            names = [b["name"] for b in json.load(f)["benchmarks"]]
        self.assertTrue(any(n.startswith("numpy/matmul/") for n in names), names)
        self.assertTrue(any(n.startswith("gemm/naive/fp32/") for n in names), names)

    def test_bench_is_one_benchmark_in_a_run_of_its_own(self):
        # Its ceilings from the run's results stored as xz, as a committed baseline is.
        xz = os.path.join(self.tmp.name, "ceilings.json.xz")
        with open(os.path.join(self.rb_run.folder, "results.json"), "rb") as f, open(xz, "wb") as g:
            g.write(lzma.compress(f.read()))
        r = rb.bench(chain_fused, chain_inputs, chain_reference, name="numpy/chain_fused/fp32", flops=5 * M,
                     bytes=8 * M, params={"n": M}, growth=4, device="cpu", quick=True, ceilings_from=xz)
        self.assertTrue(r.ok, r)
        self.assertEqual(r.bound, "memory")

    def test_builtin_runs_roofbench_kernels_beside_the_callables_in_one_run(self):
        run = rb.run([rb.Benchmark(chain_fused, chain_inputs, chain_reference, "numpy/chain_fused/fp32", flops=5 * M,
                                   bytes=8 * M, params={"n": M}, growth=4)],
                     device="cpu", quick=True, builtin="^gemm/naive/fp32/M:256/",
                     ceilings_from=os.path.join(self.rb_run.folder, "results.json"))
        self.assertEqual(sorted(r.name.split("/")[0] for r in run.results), ["gemm", "numpy"])
        for r in run.results:
            self.assertTrue(r.ok, r)
        self.assertEqual(run.data["settings"]["builtin"], True)

    def test_openblas_in_a_python_process_runs_no_fallback_kernels(self):
        # On a VM whose CPU model OpenBLAS does not know it falls back to SSE3 kernels, and the
        # roofbench binary restarts with OPENBLAS_CORETYPE set; a Python process cannot, so the
        # import sets it for OpenBLAS's load alone. Whatever the machine: no fallback is left, and
        # the environment is as it was (a NumPy loaded later chooses its own kernels).
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_CORETYPE", "ROOFBENCH_OPENBLAS_FALLBACK", "ROOFBENCH_OPENBLAS_PROBED")}
        code = ("import os, roofbench; from roofbench import _roofbench as m; print(m.openblas_core(), "
                "repr(m.openblas_better_core()), os.environ.get('OPENBLAS_CORETYPE'), "
                "os.environ['ROOFBENCH_OPENBLAS_PROBED'], sep='\\t')")

        def child(**more):
            p = subprocess.run([sys.executable, "-c", code], env=dict(env, **more), capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            return p.stdout.rstrip("\n").split("\t")

        core, better, left, probed = child()
        self.assertEqual(better, "''", f"OpenBLAS runs its {core} kernels, a fallback on this CPU")
        self.assertEqual(left, "None", "OPENBLAS_CORETYPE was left in the environment")
        # The answer travels to the Python processes it starts, on the same host and CPU model
        # alone: a planted answer is taken there (Haswell's kernels: every CI machine has AVX2),
        # and one of another host is asked again.
        key, chosen, _ = probed.rsplit("|", 2)
        self.assertEqual(child(ROOFBENCH_OPENBLAS_PROBED=f"{key}|{chosen}|Haswell")[0], "Haswell")
        core, better, _, probed_again = child(ROOFBENCH_OPENBLAS_PROBED=f"another-host|{key.split('|', 1)[1]}|{chosen}|Haswell")
        self.assertEqual((better, probed_again), ("''", probed))

    def test_load_reads_a_results_file_stored_compressed_or_plain(self):
        with open(os.path.join(self.rb_run.folder, "results.json"), "rb") as f:
            text = f.read()
        want = json.loads(text)
        for name, data in (("results.json.xz", lzma.compress(text)), ("results.json.gz", gzip.compress(text)),
                           ("results.json", text)):
            folder = os.path.join(self.tmp.name, "load", name)
            os.makedirs(folder)
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
            for where in (folder, os.path.join(folder, name)):  # the folder, or the file
                run = rb.load(where)
                self.assertEqual(run.data, want, where)
                self.assertIsNone(run.exit_code)
                self.assertEqual(run["numpy/matmul/fp32"].median_s, self.rb_run["numpy/matmul/fp32"].median_s)
            copy = os.path.join(self.tmp.name, "load-copy", name)
            run.write(copy)  # the results file as stored, and nothing in its place
            self.assertEqual(sorted(os.listdir(copy)), [name])
        cut = os.path.join(self.tmp.name, "cut.json.xz")
        with open(cut, "wb") as f:
            f.write(lzma.compress(text)[:1000])
        with self.assertRaisesRegex(ValueError, r"cut\.json\.xz: a broken xz file"):
            rb.load(cut)
        with self.assertRaisesRegex(ValueError, "holds no results.json"):
            rb.load(self.tmp.name + "/load")

    def test_bad_declarations_are_refused_before_anything_runs(self):
        with self.assertRaisesRegex(ValueError, "expected family/variant/precision"):
            rb.Benchmark(np.matmul, matmul_inputs, matmul_reference, "matmul")
        # No work declared: on the CPU nothing can count it, with counters or without.
        undeclared = rb.Benchmark(np.matmul, matmul_inputs, matmul_reference, "numpy/matmul/fp32")
        for counters in (False, True):
            with self.assertRaisesRegex(ValueError, "declare its work .*counting them needs a GPU"):
                rb.run([undeclared], device="cpu", counters=counters)
        with self.assertRaisesRegex(ValueError, "declare its work"):  # FLOPs alone place nothing
            rb.run([rb.Benchmark(np.matmul, matmul_inputs, matmul_reference, "numpy/matmul/fp32", flops=1)],
                   device="cpu")
        with self.assertRaisesRegex(ValueError, "flops = -1"):
            rb.Benchmark(np.matmul, matmul_inputs, matmul_reference, "numpy/matmul/fp32", flops=-1, bytes=1)
        with self.assertRaisesRegex(TypeError, "inputs must be a function"):
            rb.Benchmark(np.matmul, [1], matmul_reference, "numpy/matmul/fp32", bytes=1)
        with self.assertRaisesRegex(TypeError, "takes Benchmark objects"):
            rb.run([np.matmul])
        # A run that writes nothing is an error, also where an earlier run's results.json lies.
        bad = rb.Benchmark(np.matmul, matmul_inputs, matmul_reference, "numpy/matmul/fp32", bytes=1)
        with self.assertRaisesRegex(rb.RunError, "wrote no results"):
            rb.run([bad], device="cpu", options=["--budget", "-1"])
        with self.assertRaisesRegex(rb.RunError, "wrote no results"):
            rb.run([bad], device="cpu", out=self.rb_run.folder, options=["--budget", "-1"])
        self.assertEqual(rb.Run(self.rb_run.folder, 0, False).results[0].name, self.rb_run.results[0].name)

    def test_a_change_to_the_code_that_checks_is_found_and_fails_every_result(self):
        # What every check compares, and what a run compares once more when it ends (a thread a
        # kernel left behind may change things after the last check): roofbench's own modules and
        # classes, and the libraries its check uses.
        self.assertEqual(rb._roofbench.tampered(), [])
        h, result_ok, shares = rb._harness, rb.Result.ok, np.shares_memory
        real_poison, real_fget_code = h.poison, result_ok.fget.__code__
        try:
            h.poison = lambda out: None
            result_ok.fget.__code__ = (lambda self: True).__code__
            h.len = lambda x: 0  # a name that would shadow a builtin the check calls
            np.shares_memory = lambda a, b, max_work=None: False
            h.__warningregistry__ = {}  # what Python adds itself: not a change
            modules = sys.modules
            sys.modules = dict(modules)  # where the check finds the array libraries
            found = rb._roofbench.tampered()
        finally:
            sys.modules = modules
            h.poison, np.shares_memory = real_poison, shares
            result_ok.fget.__code__ = real_fget_code
            del h.len, h.__warningregistry__
        self.assertEqual(sorted(found), sorted([
            "roofbench._harness.poison was replaced",
            "the code of roofbench.Result.ok was changed (its type, __code__, defaults or closure)",
            "roofbench._harness gained a name, len",
            "numpy.shares_memory was replaced",
            "sys.modules was replaced"]))
        self.assertEqual(rb._roofbench.tampered(), [])  # all put back: nothing found
        run = rb.Run(self.rb_run.folder, 0, False, tampered=found)
        for r in run.results:
            self.assertFalse(r.ok)
            self.assertTrue(r.error.startswith("tampered: "), r.error)
            self.assertIn("found when the run ended", r.error)
        self.assertTrue(all(r.ok for r in self.rb_run.results))  # the run itself found nothing

    def test_score_seals_the_array_libraries_the_tasks_file_imported(self):
        # torch is not installed here: a stand-in with its names, in a process of its own.
        code = """
import sys, types
torch, F = types.ModuleType("torch"), types.ModuleType("torch.nn.functional")
class Tensor:
    def detach(self):
        return self
torch.Tensor, torch.matmul, F.softmax = Tensor, (lambda a, b: a), (lambda x, dim=None: x)
sys.modules.update({"torch": torch, "torch.nn.functional": F})
import roofbench as rb
rb.seal_libraries()
Tensor.detach = lambda self: None
Tensor.cpu = lambda self: None
F.softmax = lambda x, dim=None: None
torch.matmul.__code__ = (lambda a, b: b).__code__
torch.cuda = types.ModuleType("torch.cuda")  # a submodule imported later: not a change
print("\\n".join(sorted(rb._roofbench.tampered())))
"""
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), sorted([
            "torch.Tensor.detach was replaced",
            "torch.Tensor gained a name, cpu",
            "torch.nn.functional.softmax was replaced",
            "the code of torch.matmul was changed (its type, __code__, defaults or closure)"]))


if __name__ == "__main__":
    unittest.main()

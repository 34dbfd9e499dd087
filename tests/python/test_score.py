"""python -m roofbench score against the planted kernels of planted.py: the honest one is checked,
timed and plausible; every trick and every bad output is caught, each with its own message, and
the exit code says so. The first run measures the ceilings and takes the kernels that share a
declaration; the others run on its ceilings: the same tricks --trusted (what its defences give up),
each kernel that tampers with the check in a run of its own, one that claims more bytes than it
moves, a kernel's file that declares more than the task, and a reference that raises."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PLANTED = os.path.join(HERE, "planted.py")
PLANTED_BYTES = 8 * (1 << 20)  # planted.py's BYTES: its n float32 values read once and written once


def _result(p, out, err):
    lines = [json.loads(l) for l in out.splitlines() if l.strip()]
    return p.returncode, {l["name"].split("/")[1]: l for l in lines}, err


def score(*args, env=None):
    p = subprocess.run([sys.executable, "-m", "roofbench", "score", *args], capture_output=True, text=True,
                       timeout=600, env=env)
    return _result(p, p.stdout, p.stderr)


def score_at_once(runs, at_once=2):
    """Several `score` runs ({key: (args, env)}), `at_once` side by side (a machine of two cores):
    each kernel that must have a process of its own, in less than a process's time each."""
    keys, done, live = list(runs), {}, {}
    while keys or live:
        while keys and len(live) < at_once:
            k = keys.pop(0)
            args, env = runs[k]
            live[k] = subprocess.Popen([sys.executable, "-m", "roofbench", "score", *args], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, env=env)
        k = next(iter(live))
        p = live.pop(k)
        done[k] = _result(p, *p.communicate(timeout=600))
    return done


KERNELS = ["honest", "patches_timers", "cached", "cached_copy", "first_sight", "knows_the_seeds", "returns_input",
           "lazy", "changes_strides", "says_it_is_numpy", "late_subclass", "read_only", "list_subclass", "strided",
           "raises",
           "wrong_shape",
           "wrong_dtype", "returns_nan", "gpu_tensor"]
HOOKS = os.path.join(HERE, "planted_hooks.py")
# What reaches into the check from around it (a thread left running, a profile hook, a change to
# the task or to numpy.random made as the file is imported), and an inputs function that ignores its
# seed: each in a process of its own, since what it leaves behind would fail the kernels after it.
ALONE = {"other_thread": ([f"{PLANTED}::other_thread"], {}),
         "same_inputs": ([f"{PLANTED}::honest", "--inputs", f"{PLANTED}::same_inputs"], {}),
         **{t: ([f"{HOOKS}::fn"], {"PLANTED_TRICK": t})
            for t in ("profile_check", "profile_prepare", "transient_swap", "same_random", "shrink_task",
                      "polling_thread", "spec_hook", "signal_timer", "gc_callback", "numpy_internal", "killed_after",
                      "property_added", "finalizer_swap", "numpy_swapped", "random_module_swapped", "str_key",
                      "operator_index", "late_library", "options")}}
# Tricks a run without --untrusted's defences lets through (first_sight, knows_the_seeds), beside
# the cached outputs that the check after the samples catches either way.
TRUSTED = ["first_sight", "knows_the_seeds", "cached", "cached_copy"]


class Score(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.first = os.path.join(cls.tmp.name, "first")
        cls.log = os.path.join(cls.tmp.name, "tricks.log")  # planted._log: each time a trick fires
        env = dict(os.environ, PLANTED_LOG=cls.log)
        # The roofs these kernels need (DRAM update, FP32), not every one: a quarter of a minute less.
        cls.code, cls.lines, cls.err = score(*[f"{PLANTED}::{k}" for k in KERNELS], "--reference",
                                             f"{PLANTED}::reference", "--device", "cpu", "--quick", "--out",
                                             cls.first, "--skip",
                                             "ceiling/(dram_(read|write|copy|memcpy|triad)|l2|l3|fp64|math_)", env=env)
        cls.fired = cls.tricks_fired()
        cls.trusted_log = cls.log + ".trusted"
        common = ["--reference", f"{PLANTED}::reference", "--device", "cpu", "--quick", "--ceilings-from", cls.first]
        runs = {k: (args + common, dict(os.environ, **env)) for k, (args, env) in ALONE.items()}
        runs["trusted"] = ([f"{PLANTED}::{k}" for k in TRUSTED] + common + ["--trusted"],
                           dict(os.environ, PLANTED_LOG=cls.trusted_log))
        cls.alone = score_at_once(runs)
        cls.t_code, cls.t_lines, cls.t_err = cls.alone.pop("trusted")

    @classmethod
    def tricks_fired(cls, log=None):
        log = log or cls.log
        if not os.path.exists(log):
            return []
        with open(log) as f:
            return f.read().splitlines()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def line(self, kernel):
        self.assertIn(kernel, self.lines, f"no line for {kernel}: {self.err[-3000:]}")
        return self.lines[kernel]

    def failed_with(self, kernel, text):
        l = self.line(kernel)
        self.assertFalse(l["ok"], l)
        self.assertIsNotNone(l["error"], l)
        self.assertIn(text, l["error"])
        self.assertIsNone(l["time_s"], l)  # a wrong kernel gets no number

    def test_one_json_line_per_kernel_and_exit_one(self):
        self.assertEqual(sorted(self.lines), sorted(KERNELS), self.err[-3000:])
        self.assertEqual(self.code, 1)

    def test_the_honest_kernel_is_checked_timed_placed_and_plausible(self):
        l = self.line("honest")
        self.assertTrue(l["ok"] and l["verified"] and not l["implausible"], l)
        self.assertGreater(l["time_s"], 0)
        self.assertGreater(l["roof_pct"], 0)
        self.assertLess(l["roof_pct"], 110)
        self.assertEqual(l["bound"], "memory")

    def test_patched_python_timers_change_nothing(self):
        l = self.line("patches_timers")
        self.assertTrue(l["ok"], l)
        # Still the real work's time, not zero: its 8 MiB moved at no more than 1 TB/s, far above
        # any CPU. (Not a share of the honest kernel's time: each is a median of its own, and a
        # throttled machine can stall one kernel's samples several times over and not the other's.)
        self.assertGreater(l["time_s"], PLANTED_BYTES / 1e12, l)

    def test_a_cached_output_fails_a_spot_check_and_trusted_the_check_after_the_samples(self):
        self.failed_with("cached", "spot check of timed sample 1 (fresh inputs")
        self.failed_with("cached_copy", "spot check of timed sample 1 (fresh inputs")
        for k in ("cached", "cached_copy"):
            l = self.t_lines[k]
            self.assertFalse(l["ok"], l)
            self.assertIn("verification after the timed samples failed, on fresh inputs", l["error"])

    def test_a_cache_keyed_on_the_inputs_never_hits_with_fresh_inputs_every_sample(self):
        l = self.line("first_sight")
        self.assertTrue(l["ok"], l)
        self.assertNotIn("first_sight: cache hit", self.fired)
        # --trusted: every timed sample is the same inputs, and the cache answers them all, unseen.
        t = self.t_lines["first_sight"]
        self.assertTrue(t["ok"], (t, self.t_err[-2000:]))
        self.assertGreater(self.tricks_fired(self.trusted_log).count("first_sight: cache hit"), 5)

    def test_a_kernel_that_knows_the_checks_seeds_fails_a_spot_check(self):
        self.failed_with("knows_the_seeds", "spot check of timed sample")
        self.assertIn("knows_the_seeds: skipped the work", self.fired)
        # --trusted: the samples run on the first check's inputs, which it knows: it passes. What the
        # defences are for, shown: a kernel that skips its work when not checked, ok without them.
        self.assertTrue(self.t_lines["knows_the_seeds"]["ok"], self.t_lines["knows_the_seeds"])

    def test_a_kernel_that_changes_the_check_is_tampered(self):
        for kernel, text in (("patches_the_check", "roofbench._harness.host_pairs was replaced"),
                             ("rewrites_the_reference", "the code of the reference was changed"),
                             ("patches_numpy", "numpy.shares_memory was replaced")):
            code, lines, err = score(f"{PLANTED}::{kernel}", "--reference", f"{PLANTED}::reference", "--device",
                                     "cpu", "--quick", "--ceilings-from", self.first)
            self.assertEqual(code, 1, (kernel, err[-2000:]))
            l = lines["y2x1"]
            self.assertFalse(l["ok"] or l["verified"], l)
            self.assertIsNone(l["time_s"], l)
            self.assertIn("tampered: " + text, l["error"])

    def test_a_kernel_that_ends_the_process_with_a_line_of_its_own_is_not_ok(self):
        # The scoring process runs the kernels in a worker; the one that prints and exits reads
        # results.json, where no finished record of the kernel is.
        code, lines, err = score(f"{PLANTED}::exits_early", "--reference", f"{PLANTED}::reference", "--device",
                                 "cpu", "--quick", "--ceilings-from", self.first)
        self.assertEqual(code, 1, err[-2000:])
        (l,) = lines.values()
        self.assertFalse(l["ok"], l)
        self.assertIn("not measured: the scoring process ended with exit 0", l["error"])

    def test_declarations_and_inputs_come_from_the_tasks_file(self):
        out = os.path.join(self.tmp.name, "claims")
        code, lines, err = score(f"{os.path.join(HERE, 'planted_claims.py')}::from_stash", "--reference",
                                 f"{PLANTED}::reference", "--device", "cpu", "--quick", "--ceilings-from", self.first,
                                 "--out", out)
        self.assertEqual(code, 1, err[-2000:])
        l = lines["y2x1"]  # the task's NAME, not the kernel file's
        self.assertIn("not an array", l["error"])  # its stash is empty: the task made the inputs
        with open(os.path.join(out, "results.json")) as f:
            (b,) = json.load(f)["benchmarks"]
        self.assertEqual(b["bytes"], 8 * (1 << 20))  # planted.BYTES, not four times it
        self.assertEqual(b["flops"], 2 * (1 << 20))  # planted.FLOPS, not forty times it

    def test_returning_the_input_is_refused(self):
        self.failed_with("returns_input", "returned its input")

    def test_a_lazy_result_is_no_array(self):
        self.failed_with("lazy", "not an array")

    def alone_failed_with(self, key, text):
        code, lines, err = self.alone[key]
        self.assertEqual(code, 1, (key, err[-2000:]))
        (l,) = lines.values()
        self.assertFalse(l["ok"], (key, l))
        self.assertIsNone(l["time_s"], (key, l))  # a wrong kernel gets no number
        self.assertIn(text, l["error"] or "", (key, l))

    def test_work_left_to_another_thread_is_refused(self):
        self.alone_failed_with("other_thread", "refused (--untrusted): 1 Python thread(s) more than when the run began")
        self.alone_failed_with("polling_thread", "refused (--untrusted): 1 Python thread(s) more than when the run")

    def test_a_profile_hook_that_runs_inside_the_check_or_the_inputs_is_refused(self):
        for trick in ("profile_check", "profile_prepare"):
            self.alone_failed_with(trick, "refused (--untrusted): a profile or trace function is set")
        # Its swap, made as prepare poisons the last output, is found by the seals' comparison that
        # comes next, before the inputs are made (and before the hook is looked for).
        self.alone_failed_with("transient_swap", "tampered: roofbench._harness.make_inputs was replaced")

    def test_inputs_that_do_not_follow_their_seed_are_refused(self):
        self.alone_failed_with("same_inputs", "are the same: the inputs function ignores its seed")
        self.alone_failed_with("same_random", "tampered: numpy.random.RandomState was replaced")

    def test_a_kernel_that_changes_the_tasks_state_is_tampered(self):
        self.alone_failed_with("shrink_task", ".N was replaced")
        self.alone_failed_with("numpy_internal", ".array_equal was replaced")

    def test_code_run_from_a_signal_or_the_collector_is_refused_and_an_import_hook_reaches_nothing(self):
        self.alone_failed_with("signal_timer", "refused (--untrusted): a Python handler of signal")
        self.alone_failed_with("gc_callback", "refused (--untrusted): a garbage collector callback was added")
        # The check runs no import, and holds the output in C++: the hook never runs, the output
        # stays unfilled.
        self.alone_failed_with("spec_hook", "verification failed")

    def test_what_a_third_round_found_is_caught(self):
        # Comparing the seals looks up the names sealed: an object added since is never touched.
        self.alone_failed_with("property_added", "verification failed")
        # The last output's finalizer runs as prepare drops it, and the seals are compared then.
        self.alone_failed_with("finalizer_swap", "tampered: numpy.random.RandomState was replaced")
        self.alone_failed_with("numpy_swapped", "tampered: sys.modules.numpy was replaced")
        self.alone_failed_with("random_module_swapped", "tampered: numpy.random was replaced")

    def test_what_a_fourth_round_found_is_caught(self):
        self.alone_failed_with("str_key", "tampered: json holds a key that is not a str")
        self.alone_failed_with("operator_index", "tampered: operator.index was replaced")
        # The array types were bound before the kernel's file ran: its object is never asked.
        self.alone_failed_with("late_library", "verification failed")
        code, lines, err = self.alone["options"]
        self.assertEqual(code, 2, err[-2000:])  # frozen: its file fails to load, with one line
        self.assertIn("raised AttributeError on import", err)

    def test_a_worker_that_dies_after_its_line_fails_every_line(self):
        code, lines, err = self.alone["killed_after"]
        self.assertEqual(code, 1, err[-2000:])
        (l,) = lines.values()
        self.assertTrue(l["verified"], l)  # the kernel itself was right ...
        self.assertFalse(l["ok"], l)  # ... but the process that scored it did not end as it should
        self.assertIn("not ok: the scoring process ended with exit -9", l["error"])

    def test_a_kernel_that_changes_its_input_is_refused(self):
        self.failed_with("changes_strides", "the callable changed input 0 (its shape, strides, dtype or memory)")

    def test_an_output_must_be_the_array_type_itself_and_writeable(self):
        self.failed_with("says_it_is_numpy", "not an array")
        self.failed_with("late_subclass", "a subclass of numpy's array type")
        self.failed_with("read_only", "returned a read-only array")
        self.failed_with("list_subclass", "not an array")  # a list's subclass: its __iter__ would run in the check
        self.failed_with("strided", "refused (--untrusted): the callable returned a NumPy array that is not C-contiguous")

    def test_bad_outputs_each_say_what_is_wrong(self):
        self.failed_with("raises", "the callable raised RuntimeError: the kernel fails on purpose")
        self.failed_with("wrong_shape", "has shape (1048575,), the reference's is (1048576,)")
        self.failed_with("wrong_dtype", "has dtype float64, the reference's is float32")
        self.failed_with("returns_nan", "got nan")
        self.failed_with("gpu_tensor", "a GPU array on a CPU run")

    def test_the_results_folder_is_a_roofbench_results_folder(self):
        for f in ("results.json", "gbench.json", "roofline.svg", "report.html", "summary.md"):
            self.assertTrue(os.path.exists(os.path.join(self.first, f)), f)
        with open(os.path.join(self.first, "results.json")) as f:
            r = json.load(f)
        self.assertEqual(r["schema"], "roofbench.results.v1")
        self.assertTrue(r["ceilings"])

    def test_work_declared_above_what_it_does_is_implausible(self):
        # A thousand times the 8 bytes an element it must move: NumPy's single-threaded passes reach
        # a fraction of the machine's two-core DRAM roof, and a throttled machine can leave the
        # kernel's samples bimodal (a wide noise allowance) and its median several times too slow,
        # so only a claim far above the roof is past its noise on every machine.
        code, lines, err = score(f"{PLANTED}::honest", "--reference", f"{PLANTED}::reference", "--bytes",
                                 str(1000 * PLANTED_BYTES), "--device", "cpu", "--quick", "--ceilings-from", self.first)
        self.assertEqual(code, 1, err[-2000:])
        l = lines["y2x1"]  # one kernel: the name is the file's NAME
        self.assertTrue(l["verified"] and l["implausible"] and not l["ok"], l)
        self.assertIn("IMPLAUSIBLE", err)

    def test_a_reference_that_raises_fails_the_kernel_with_its_message(self):
        code, lines, err = score(f"{PLANTED}::honest", "--reference", f"{PLANTED}::raising_reference", "--device",
                                 "cpu", "--quick", "--ceilings-from", self.first)
        self.assertEqual(code, 1, err[-2000:])
        self.assertIn("the reference raised ValueError: the reference fails on purpose", lines["y2x1"]["error"])

    def test_bad_input_is_one_line_and_exit_two(self):
        for args, text in ((["nofile.py::f"], "no file nofile.py"),
                           ([f"{PLANTED}::missing"], "has no 'missing'"),
                           ([f"{PLANTED}"], "expected FILE.py::name"),
                           ([f"{PLANTED}::honest", "--name", "Bad Name"], "expected family/variant/precision")):
            code, lines, err = score(*args, "--device", "cpu", "--quick")
            self.assertEqual(code, 2, (args, err))
            self.assertEqual(lines, {})
            self.assertIn(text, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)


if __name__ == "__main__":
    unittest.main()

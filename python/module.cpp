// roofbench._roofbench: a Python callable as a roofbench benchmark. The callable becomes an
// Instance of a Variant registered at run time, and `main` is the same command line a C++ binary
// gets (roofbench/main.h). So a Python benchmark has the same harness as a C++ variant: fresh
// inputs from a seed, its last output poisoned, the check before the samples and again after them
// on fresh inputs, the cache flush, the device's timer, the stop rules, the clocks, the ceilings
// of the same run, the plausibility gate and the same results.json and reports (docs/python.md).
// The Python side (roofbench/_harness.py) makes inputs, poisons outputs and brings outputs to the
// host; the check itself is roofbench's Checker, in FP64, here.
#include <fcntl.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "bench/cpu_info.h"
#include "bench/openblas_core.h"
#include "bench/registry.h"
#include "bench/results.h"
#include "roofbench/verify.h"

#ifdef ROOFBENCH_HAVE_CUDA
#include "bench/device.h"
#endif

namespace nb = nanobind;

namespace roofbench::python {
namespace {

// Where the benchmarks of this module come from: forget_variants(kSource) takes them out again.
constexpr const char* kSource = "<python>";

// A run holds jobs that point into the registry, and Google Benchmark's registrations: while one
// is in progress (a callable that starts another, another Python thread while the GIL is let
// go), the registry may not change and no other run may start.
bool g_running = false;
void refuse_while_running(const char* what) {
  if (g_running)
    throw std::runtime_error(std::string("roofbench: ") + what +
                             " while a run is in progress (a benchmark's callable, or another thread, started one)");
}

nb::object harness() {
  return nb::module_::import_("roofbench._harness");
}

// A Python exception as one line: "ValueError: bad shape".
std::string one_line(nb::python_error& e, const std::string& who) {
  std::string type = "an exception", text;
  try {
    type = nb::cast<std::string>(nb::handle(e.type()).attr("__name__"));
    text = nb::cast<std::string>(nb::str(e.value()));
  } catch (...) {
  }
  if (const auto nl = text.find('\n'); nl != std::string::npos) text = text.substr(0, nl);
  return who + " raised " + type + (text.empty() ? "" : ": " + text);
}

struct Callable {
  nb::object fn, inputs, reference;  // reference: None for a timing-only benchmark
  Precision precision = Precision::fp32;
  double growth = 1, atol = 0;  // the check's tolerance: atol + growth x 4 u(precision) x |reference|
  std::string device;           // "cpu" or "cuda": where its arrays must live
};

class PyInstance final : public Instance {
 public:
  explicit PyInstance(std::shared_ptr<const Callable> c) : c_(std::move(c)) {}

  void prepare(std::uint64_t seed) override {
    call_harness("the inputs function", [&] {
      harness().attr("poison")(out_);  // what it returned last: returned again, it fails its check
      out_ = nb::none();
      args_ = harness().attr("make_inputs")(c_->inputs, seed, c_->device);
    });
  }

  void run() override {
    try {
      out_ = c_->fn(*args_);
    } catch (nb::python_error& e) {
      throw std::runtime_error(one_line(e, "the callable"));
    }
  }

  Verification verify() override {
    nb::object pairs;
    call_harness("the check", [&] { pairs = harness().attr("host_pairs")(out_, args_, c_->reference, c_->device); });
    Tolerance tol = tolerance_for(c_->precision, c_->growth);
    tol.abs_tol = std::max(tol.abs_tol, c_->atol);
    Checker checker(tol, "every element vs the reference, in FP64 (" + to_string(c_->precision) + " tolerance)");
    std::int64_t base = 0;
    for (nb::handle pair : pairs) {
      using Host = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
      const auto got = nb::cast<Host>(pair[0]), want = nb::cast<Host>(pair[1]);
      for (std::size_t i = 0; i < got.shape(0); ++i)
        checker.check(got(i), want(i), base + static_cast<std::int64_t>(i));
      base += static_cast<std::int64_t>(got.shape(0));
    }
    return checker.finish();
  }

 private:
  template <class F>
  void call_harness(const std::string& who, F&& f) {
    try {
      f();
    } catch (nb::python_error& e) {
      // The harness's own messages (roofbench._harness.BadOutput) are already one line about the
      // callable; anything else is the user's function raising.
      if (nb::isinstance(e.value(), harness().attr("BadOutput")))
        throw std::runtime_error(nb::cast<std::string>(nb::str(e.value())));
      throw std::runtime_error(one_line(e, who));
    }
  }

  std::shared_ptr<const Callable> c_;
  nb::object args_ = nb::tuple(), out_ = nb::none();
};

void add(const std::string& family, const std::string& variant, const std::string& precision, nb::object fn,
         nb::object inputs, nb::object reference, const std::map<std::string, std::int64_t>& params, double flops,
         double bytes, const std::string& level, const std::string& unit, const std::string& backend,
         const std::string& compared_with, double growth, double atol, bool warm) {
  refuse_while_running("add");
  auto c = std::make_shared<Callable>();
  c->fn = std::move(fn);
  c->inputs = std::move(inputs);
  c->reference = std::move(reference);
  c->precision = precision_from_string(precision);
  c->growth = growth;
  c->atol = atol;
  c->device = backend;
  Variant v;
  v.family = family;
  v.variant = variant;
  v.precision = c->precision;
  v.backend = backend_from_string(backend);
  v.unit = unit_from_string(unit);
  v.level = level_from_string(level);
  v.summary = "a Python callable";
  if (c->reference.is_none())
    v.timing_only = true;
  else
    v.reference = "the Python reference " +
                  nb::cast<std::string>(nb::str(nb::getattr(c->reference, "__qualname__",
                                                            nb::handle(c->reference.type()).attr("__name__"))));
  Work w;
  if (bytes > 0) w.read("bytes, as declared from Python", bytes, 1.0);
  if (flops > 0) w.flops(flops, "as declared from Python");
  v.work = w;
  v.sizes = v.quick_sizes = v.test_sizes = {Params(params.begin(), params.end())};
  v.compared_with = compared_with;
  v.warm = warm;
  v.launches_kernels = v.backend == Backend::cuda;
  v.make = [c](const Params&) { return std::make_unique<PyInstance>(c); };
  register_variant_at_run_time(std::move(v), kSource);
}

// The command line in this process. With quiet_stdout, what it prints to stdout goes to stderr
// (`python -m roofbench score` keeps stdout for its JSON lines).
int main_args(std::vector<std::string> args, bool quiet_stdout) {
  refuse_while_running("main");
  g_running = true;
  struct Done {
    ~Done() { g_running = false; }
  } done;
  args.insert(args.begin(), "roofbench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::cout.flush();
  const int saved = quiet_stdout ? dup(1) : -1;
  if (saved >= 0) dup2(2, 1);
  // Not roofbench_main: it may restart its process for OpenBLAS, and this process is Python's.
  const int code = cli::run_command_line(static_cast<int>(args.size()), argv.data());
  std::cout.flush();
  std::fflush(stdout);
  if (saved >= 0) {
    dup2(saved, 1);
    close(saved);
  }
  return code;
}

int gpu_count() {
#ifdef ROOFBENCH_HAVE_CUDA
  return cuda_device_count();
#else
  return 0;
#endif
}

}  // namespace
}  // namespace roofbench::python

NB_MODULE(_roofbench, m) {
  using namespace roofbench::python;
  m.doc() = "roofbench's harness for Python callables (use the roofbench package, not this module)";
  m.def("add", &add, nb::arg("family"), nb::arg("variant"), nb::arg("precision"), nb::arg("fn"), nb::arg("inputs"),
        nb::arg("reference").none(), nb::arg("params"), nb::arg("flops"), nb::arg("bytes"), nb::arg("level"),
        nb::arg("unit"), nb::arg("backend"), nb::arg("compared_with"), nb::arg("growth"), nb::arg("atol"),
        nb::arg("warm"));
  m.def("forget", [] {
    refuse_while_running("forget");
    roofbench::forget_variants(kSource);
  });
  m.def("main", &main_args, nb::arg("args"), nb::arg("quiet_stdout") = false);
  // OpenBLAS's kernels, chosen when it loaded: the package's import sets OPENBLAS_CORETYPE first
  // where they would be a fallback (bench/openblas_core.h; roofbench/__init__.py).
  m.def("openblas_core", [] { return roofbench::openblas_core(); });
  m.def("openblas_better_core",
        [] { return roofbench::openblas_better_core(roofbench::openblas_core(), roofbench::cpu_info().isa); });
  m.def("note_openblas_fallback", &roofbench::note_openblas_fallback, nb::arg("chosen"));
  m.def("gpu_count", &gpu_count);
  // A results file's JSON text (or a run folder's), compressed or not, through the reader every
  // command uses: (path, text), or ValueError with its one line.
  m.def("results_text", [](const std::string& file_or_dir) {
    try {
      const std::string path = roofbench::results_path(file_or_dir);
      return std::make_pair(path, roofbench::read_results_text(path));
    } catch (const roofbench::InputError& e) {
      throw nb::value_error(e.what());
    }
  });
}

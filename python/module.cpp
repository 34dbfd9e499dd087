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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
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

// roofbench._harness's functions and numpy.ndarray, bound once when the package is imported
// (`bind`), before any kernel's file runs: never looked up again during a run (an import, even of
// a module already loaded, runs Python code a kernel could have put on its way).
struct Bound {
  std::map<std::string, nb::object> harness;
  nb::object ndarray;  // numpy.ndarray, where numpy is there
  // The array types a check takes, each with its kind ("numpy", "torch", "cupy"), bound before any
  // kernel's file runs (pinned by the score command): never looked up in sys.modules in a check.
  std::vector<std::pair<nb::object, std::string>> types;
  bool types_pinned = false;
};
Bound& bound() {
  static auto* b = new Bound();  // never destroyed: Python may be gone at exit
  return *b;
}
void bind(nb::object module, nb::object ndarray) {
  if (!bound().harness.empty()) return;
  for (auto [k, v] : nb::borrow<nb::dict>(nb::getattr(module, "__dict__")))
    if (PyUnicode_Check(k.ptr())) bound().harness[nb::cast<std::string>(k)] = nb::borrow(v);
  bound().ndarray = std::move(ndarray);
}
nb::object harness(const char* name) {
  if (auto it = bound().harness.find(name); it != bound().harness.end()) return it->second;
  return nb::module_::import_("roofbench._harness").attr(name);  // not bound: the package was not imported
}
bool exact_ndarray(nb::handle o) {
  return bound().ndarray.is_valid() && !bound().ndarray.is_none() &&
         reinterpret_cast<PyObject*>(Py_TYPE(o.ptr())) == bound().ndarray.ptr();
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

// ---------------------------------------------------------------- what a kernel may not change
// A kernel runs in this process, so it could change the code that checks it: rebind
// roofbench._harness.host_pairs to compare the reference with itself, swap the reference's
// __code__, or replace numpy.shares_memory. Sealed namespaces are compared, object by object,
// with what they held when sealed, before and after every check (PyInstance::verify) and when a
// run ends (`tampered()`); any change fails the check. The comparison is this C++, which Python
// cannot rebind. Code that rewrites the process's memory (ctypes) is beyond it: docs/python.md.

// An object and what a call of it runs: for a function its code, defaults and closure cells'
// contents; for a property, staticmethod or classmethod those of the functions it holds.
std::vector<nb::object> fingerprint(nb::handle v) {
  // The object, its type (an object's __class__ can be swapped under the same identity), and so on.
  std::vector<nb::object> f{nb::borrow(v), nb::borrow(reinterpret_cast<PyObject*>(Py_TYPE(v.ptr())))};
  auto add = [&](PyObject* o) { f.push_back(o ? nb::borrow(o) : nb::none()); };
  auto function = [&](nb::handle fn) {
    if (!PyFunction_Check(fn.ptr())) return;
    add(PyFunction_GetCode(fn.ptr()));
    add(PyFunction_GetDefaults(fn.ptr()));
    add(PyFunction_GetKwDefaults(fn.ptr()));
    if (PyObject* cells = PyFunction_GetClosure(fn.ptr()))
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cells); ++i) add(PyCell_GET(PyTuple_GET_ITEM(cells, i)));
  };
  function(v);
  // Exact types alone: a subclass's fget or __func__ could be a property of its own, run here.
  if (Py_IS_TYPE(v.ptr(), &PyProperty_Type)) {
    for (const char* a : {"fget", "fset", "fdel"}) {
      nb::object g = nb::getattr(v, a, nb::none());
      f.push_back(g);
      function(g);
    }
  } else if (Py_IS_TYPE(v.ptr(), &PyStaticMethod_Type) || Py_IS_TYPE(v.ptr(), &PyClassMethod_Type)) {
    nb::object g = nb::getattr(v, "__func__", nb::none());
    f.push_back(g);
    function(g);
  }
  return f;
}

bool same(const std::vector<nb::object>& a, const std::vector<nb::object>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!a[i].is(b[i])) return false;
  return true;
}

// A namespace: a module's dict, a class's, or one object (a reference, an inputs function).
struct Seal {
  std::string where;  // "roofbench._harness", "numpy", "the reference"
  nb::object owner;   // the module or class (kept alive); an object sealed alone: itself
  bool strict = false;  // any change, a name added too (roofbench's own); else a callable rebound or removed
  bool single = false;  // one object, not a namespace
  std::vector<std::string> names;  // only these names of it (builtins: what the check and the report call)
  std::vector<std::pair<std::string, std::vector<nb::object>>> entries;
};

// The dict itself behind a sealed namespace (borrowed), or null.
PyObject* real_dict(const Seal& s) {
  PyObject* o = s.owner.ptr();
  if (PyDict_Check(o)) return o;
  if (PyModule_Check(o)) return PyModule_GetDict(o);
  if (PyType_Check(o)) return reinterpret_cast<PyTypeObject*>(o)->tp_dict;
  return nullptr;
}

nb::object items_of(const Seal& s) {
  if (PyDict_Check(s.owner.ptr())) return s.owner;  // a function's __globals__: its module's namespace
  if (PyModule_Check(s.owner.ptr())) return nb::borrow(PyModule_GetDict(s.owner.ptr()));
  return nb::steal(PyObject_GetAttrString(s.owner.ptr(), "__dict__"));  // a class's mappingproxy
}

std::vector<std::pair<std::string, std::vector<nb::object>>> snapshot(const Seal& s, bool all) {
  std::vector<std::pair<std::string, std::vector<nb::object>>> out;
  if (s.single) {
    out.emplace_back("", fingerprint(s.owner));
    return out;
  }
  nb::object items = nb::steal(PyMapping_Items(items_of(s).ptr()));
  if (!items.is_valid()) throw nb::python_error();
  for (nb::handle kv : items) {
    nb::handle k = kv[0], v = kv[1];
    if (!PyUnicode_Check(k.ptr())) continue;
    const std::string name = nb::cast<std::string>(k);
    if (!s.names.empty() && std::find(s.names.begin(), s.names.end(), name) == s.names.end()) continue;
    if (!all && !PyCallable_Check(v.ptr()) && !PyModule_Check(v.ptr())) continue;  // a library's state, which moves
    out.emplace_back(name, fingerprint(v));
  }
  return out;
}

std::vector<Seal>& seals() {
  static auto* s = new std::vector<Seal>();  // never destroyed: Python may be gone at exit
  return *s;
}

// Seals `owner` as `where`, once: sealing it again keeps what it held the first time.
void seal(nb::object owner, const std::string& where, bool strict, bool single, std::vector<std::string> names) {
  for (const Seal& s : seals())
    if (s.owner.is(owner) && s.where == where) return;
  Seal s{where, std::move(owner), strict, single, std::move(names), {}};
  s.entries = snapshot(s, strict);
  seals().push_back(std::move(s));
}

// What has changed in the sealed namespaces, one line each (none when nothing has).
std::vector<std::string> changes(const std::vector<const Seal*>& which) {
  std::vector<std::string> out;
  for (const Seal* s : which) {
    // Its namespace read here, entry by entry (PyDict_Next: no Python code runs, as a lookup by
    // name would where a key is a str subclass with an __eq__ of its own, which is refused).
    std::map<std::string, nb::object> now;
    if (!s->single) {
      PyObject* d = real_dict(*s);
      if (!d) {
        out.push_back(s->where + " has no namespace any more");
        continue;
      }
      Py_ssize_t pos = 0;
      PyObject *k, *v;
      bool odd_key = false;
      while (PyDict_Next(d, &pos, &k, &v)) {
        Py_ssize_t len = 0;
        const char* c = PyUnicode_CheckExact(k) ? PyUnicode_AsUTF8AndSize(k, &len) : nullptr;
        if (!c) {
          PyErr_Clear();
          odd_key = true;
          continue;
        }
        now.emplace(std::string(c, static_cast<std::size_t>(len)), nb::borrow(v));
      }
      if (odd_key)
        out.push_back(s->where + " holds a key that is not a str (a str subclass's __eq__ runs at every lookup)");
    }
    // The names recorded when it was sealed (no fingerprint of anything added since: taking one
    // could run an added object's code).
    for (const auto& [name, f] : s->entries) {
      const std::string what = s->single ? s->where : s->where + "." + name;
      nb::object v;
      if (s->single) {
        v = s->owner;
      } else if (auto it = now.find(name); it != now.end()) {
        v = it->second;
      }
      if (!v.is_valid()) {
        out.push_back(what + " was removed");
        continue;
      }
      const std::vector<nb::object> now = fingerprint(v);
      if (!now.front().is(f.front()))
        out.push_back(what + " was replaced");
      else if (!same(now, f))
        out.push_back("the code of " + what + " was changed (its type, __code__, defaults or closure)");
    }
    // A name added to roofbench's own (or the task's): one that can shadow what its code calls.
    // Left aside: a submodule imported later (roofbench.__main__) and __warningregistry__, which
    // Python adds at the first warning raised from a module.
    if (s->strict && s->names.empty() && !s->single)
      for (const auto& [name, v] : now) {
        bool known = false;
        for (const auto& e : s->entries) known = known || e.first == name;
        if (known || name == "__warningregistry__") continue;
        if (!PyModule_Check(v.ptr())) out.push_back(s->where + " gained a name, " + name);  // not a submodule imported since
      }
  }
  return out;
}

std::vector<std::string> library_changes() {
  std::vector<const Seal*> all;
  for (const Seal& s : seals()) all.push_back(&s);
  return changes(all);
}

std::string tamper_error(const std::vector<std::string>& found) {
  std::string list;
  for (std::size_t i = 0; i < found.size() && i < 3; ++i) list += (i ? "; " : "") + found[i];
  if (found.size() > 3) list += "; and " + std::to_string(found.size() - 3) + " more";
  return "tampered: " + list +
         " during the run: the code that checks a kernel was changed from inside the process (by a kernel, its "
         "file or a thread it started), so no check of this run can be trusted";
}

// ---------------------------------------------------------------- code that runs inside the check
// --untrusted: what could run a kernel's code between its call's return and the check, untimed,
// is refused: a profile or trace function on any thread (sys.setprofile, sys.settrace, threading's
// and their *_all_threads), a sys.monitoring tool (3.12+), a Python thread the kernel started and
// left running (it could fill the output while the check reads it, or change the inputs), and the
// garbage collector's finalizers (off while the check copies the output and reads the inputs).
// The functions used here are taken when this module is imported, before any kernel's file runs.
struct Guards {
  nb::object gc_disable, gc_enable, gc_isenabled, get_tool;  // get_tool: None before 3.12
  nb::object gc_callbacks, gc_get_threshold, getsignal, getitimer, valid_signals;
  std::vector<int> itimers;  // signal.ITIMER_REAL, _VIRTUAL, _PROF
  int threads_at_start = -1;  // Python threads when the run (or the score command) began
  bool pinned = false;        // taken by the score command, before any kernel's file ran: kept
  // Also then: each signal's Python handler, the collector's callbacks and thresholds. A Python
  // signal handler runs between any two bytecodes of the main thread (a timer's, inside the
  // check), and a collector's callback at any allocation.
  std::vector<std::pair<int, nb::object>> handlers;
  Py_ssize_t callbacks = 0;
  nb::object threshold;
};
Guards& guards() {
  static auto* g = new Guards();  // never destroyed: Python may be gone at exit
  return *g;
}

int python_threads() {
  int n = 0;
  for (PyThreadState* t = PyInterpreterState_ThreadHead(PyInterpreterState_Get()); t; t = PyThreadState_Next(t)) ++n;
  return n;
}

// What of the above is there now ("" when nothing).
std::string code_that_could_run() {
  for (PyThreadState* t = PyInterpreterState_ThreadHead(PyInterpreterState_Get()); t; t = PyThreadState_Next(t))
    if (t->c_profilefunc || t->c_tracefunc)
      return "a profile or trace function is set (sys.setprofile or sys.settrace): it runs code inside the check";
  if (guards().get_tool.is_valid() && !guards().get_tool.is_none())
    for (int id = 0; id < 6; ++id) {
      nb::object tool = guards().get_tool(id);
      if (!tool.is_none())
        return "a sys.monitoring tool is registered (" + nb::cast<std::string>(nb::str(tool)) +
               "): it runs code inside the check";
    }
  Guards& g = guards();
  if (g.threads_at_start >= 0) {
    for (const auto& [sig, handler] : g.handlers)
      if (!g.getsignal(sig).is(handler))
        return "a Python handler of signal " + std::to_string(sig) + " was set: it runs inside the check";
    for (int which : g.itimers) {
      nb::object t = g.getitimer(which);
      if (nb::cast<double>(t[0]) != 0 || nb::cast<double>(t[1]) != 0)
        return "an interval timer is armed (signal.setitimer): its signal's handler runs inside the check";
    }
    if (PyList_Check(g.gc_callbacks.ptr()) && PyList_GET_SIZE(g.gc_callbacks.ptr()) != g.callbacks)
      return "a garbage collector callback was added (gc.callbacks): it runs inside the check";
    if (!g.gc_get_threshold().equal(g.threshold))
      return "the garbage collector's thresholds were changed (gc.set_threshold)";
  }
  const int threads = python_threads();
  if (guards().threads_at_start >= 0 && threads > guards().threads_at_start)
    return std::to_string(threads - guards().threads_at_start) +
           " Python thread(s) more than when the run began are running: a kernel's threads must end before it "
           "returns, since they could change its output or its inputs while the check reads them";
  return "";
}

void refuse_code_that_could_run() {
  const std::string why = code_that_could_run();
  if (!why.empty())
    throw std::runtime_error("refused (--untrusted): " + why + "; score only kernels that leave none (or, for code "
                             "you have read, --trusted)");
}

// ---------------------------------------------------------------- NumPy arrays held in C++
// --untrusted, where every input and output is a numpy.ndarray itself (C-contiguous, a format
// read here): the inputs are copied and hashed, the last output poisoned, the output copied, held
// against the inputs' memory and compared with the reference, all here, through the buffer
// protocol, which runs no Python code for an ndarray: no code of the kernel's can run between its
// call's return and the check, or reach the check's copy. Other arrays (torch, cupy, other
// formats) take the Python path (roofbench/_harness.py).
struct Held {
  const unsigned char* ptr = nullptr;  // its memory, as the buffer gave it
  Py_ssize_t len = 0;
  std::vector<Py_ssize_t> shape, strides;
  std::string format, dtype;  // the buffer's format ("<f"), numpy's name ("float32")
  Py_ssize_t itemsize = 0;
  bool readonly = false;
  std::vector<unsigned char> bytes;  // a copy
  double (*read)(const unsigned char*) = nullptr;  // one element as a double
};

template <class T>
double read_as(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}
double read_half(const unsigned char* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
  const double s = sign ? -1.0 : 1.0;
  if (exp == 0) return s * std::ldexp(frac, -24);
  if (exp == 31) return frac ? std::nan("") : s * HUGE_VAL;
  return s * std::ldexp(frac + 1024, exp - 25);
}

// The reader of a native-order buffer format, or none (a format the Python path reads).
double (*reader(std::string f, Py_ssize_t size))(const unsigned char*) {
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@')) f = f.substr(1);
  if (f.size() != 1) return nullptr;
  switch (f[0]) {
    case 'f': return size == 4 ? read_as<float> : nullptr;
    case 'd': return size == 8 ? read_as<double> : nullptr;
    case 'e': return size == 2 ? read_half : nullptr;
    case '?': return read_as<bool>;
    case 'b': case 'h': case 'i': case 'l': case 'q':
      return size == 1 ? read_as<std::int8_t> : size == 2 ? read_as<std::int16_t> : size == 4 ? read_as<std::int32_t>
             : size == 8 ? read_as<std::int64_t> : nullptr;
    case 'B': case 'H': case 'I': case 'L': case 'Q':
      return size == 1 ? read_as<std::uint8_t> : size == 2 ? read_as<std::uint16_t> : size == 4 ? read_as<std::uint32_t>
             : size == 8 ? read_as<std::uint64_t> : nullptr;
    default: return nullptr;
  }
}

// numpy's name of a native-order buffer format ("float32"), or "" for one not read here.
std::string dtype_name(std::string f, Py_ssize_t size) {
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@')) f = f.substr(1);
  if (f.size() != 1) return "";
  const std::string bits = std::to_string(8 * size);
  switch (f[0]) {
    case 'f': case 'd': case 'e': return "float" + bits;
    case '?': return "bool";
    case 'b': case 'h': case 'i': case 'l': case 'q': return "int" + bits;
    case 'B': case 'H': case 'I': case 'L': case 'Q': return "uint" + bits;
    default: return "";
  }
}

bool exact_ndarray(nb::handle o);  // below, with the functions bound at import

// `o` held, or none where the C++ path cannot take it.
std::optional<Held> hold(nb::handle o) {
  if (!exact_ndarray(o)) return std::nullopt;
  Py_buffer v;
  if (PyObject_GetBuffer(o.ptr(), &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    return std::nullopt;
  }
  Held h;
  h.ptr = static_cast<const unsigned char*>(v.buf);
  h.len = v.len;
  h.shape.assign(v.shape, v.shape + v.ndim);
  if (v.strides) h.strides.assign(v.strides, v.strides + v.ndim);
  h.format = v.format ? v.format : "B";
  h.itemsize = v.itemsize;
  h.readonly = v.readonly;
  h.read = reader(h.format, v.itemsize);
  h.bytes.assign(h.ptr, h.ptr + v.len);
  PyBuffer_Release(&v);
  h.dtype = dtype_name(h.format, h.itemsize);  // from the format: str(o.dtype) would run numpy's Python code
  if (!h.read || h.dtype.empty()) return std::nullopt;
  return h;
}

std::string shape_text(const std::vector<Py_ssize_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

std::uint64_t digest(const std::vector<Held>& all) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::uint64_t w) { h = (h ^ w) * 0x100000001b3ull; h ^= h >> 29; };
  for (const Held& a : all) {
    for (Py_ssize_t d : a.shape) mix(static_cast<std::uint64_t>(d));
    const std::size_t n = a.bytes.size();
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, a.bytes.data() + i, 8);
      mix(w);
    }
    for (; i < n; ++i) mix(a.bytes[i]);
  }
  return h;
}

// NaN into a float array, the largest value into an integer one, true into a bool one.
bool poison_held(nb::handle o) {
  if (!exact_ndarray(o)) return false;
  Py_buffer v;
  if (PyObject_GetBuffer(o.ptr(), &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) != 0) {
    PyErr_Clear();
    return false;
  }
  std::string f = v.format ? v.format : "B";
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@')) f = f.substr(1);
  std::vector<unsigned char> one(static_cast<std::size_t>(v.itemsize), 0xFF);  // unsigned: its largest value
  bool ok = f.size() == 1;
  if (ok && (f[0] == 'f' || f[0] == 'd' || f[0] == 'e')) {
    const float nf = std::nanf("");
    const double nd = std::nan("");
    const std::uint16_t nh = 0x7E00;
    if (f[0] == 'f' && v.itemsize == 4) std::memcpy(one.data(), &nf, 4);
    else if (f[0] == 'd' && v.itemsize == 8) std::memcpy(one.data(), &nd, 8);
    else if (f[0] == 'e' && v.itemsize == 2) std::memcpy(one.data(), &nh, 2);
    else ok = false;
  } else if (ok && f[0] == '?') {
    one.assign(1, 1);
  } else if (ok && std::string("bhilq").find(f[0]) != std::string::npos) {
    one.back() = 0x7F;  // little-endian: the largest signed value
  } else if (!(ok && std::string("BHILQ").find(f[0]) != std::string::npos)) {
    ok = false;
  }
  if (ok)
    for (Py_ssize_t i = 0; i + v.itemsize <= v.len; i += v.itemsize)
      std::memcpy(static_cast<unsigned char*>(v.buf) + i, one.data(), one.size());
  PyBuffer_Release(&v);
  return ok;
}

struct Callable {
  nb::object fn, inputs, reference;  // reference: None for a timing-only benchmark
  Precision precision = Precision::fp32;
  double growth = 1, atol = 0;  // the check's tolerance: atol + growth x 4 u(precision) x |reference|
  std::string device;           // "cpu" or "cuda": where its arrays must live
  // The reference and the inputs function, sealed when added; with untrusted, every name of
  // their modules too, where the kernel is not defined there (what the reference calls and reads:
  // a kernel that rebinds the reference's helper, or the task's N, is found).
  std::vector<Seal> own;
  bool untrusted = false;  // MeasureOptions::untrusted: the guards above, the inputs held to what prepare made
};

class PyInstance final : public Instance {
 public:
  explicit PyInstance(std::shared_ptr<const Callable> c) : c_(std::move(c)) {}

  void prepare(std::uint64_t seed) override {
    const Collector off(c_->untrusted);  // no collector callback of the kernel's runs here
    call_harness("the inputs function", [&] {
      // What it returned last: returned again, it fails its check.
      if (!(c_->untrusted && poison_held(out_))) harness("poison")(out_);
      out_ = nb::none();
      args_ = nb::tuple();
      if (c_->untrusted) {
        // Their finalizers have run now (a kernel's __del__, weakref.finalize): what they, or the
        // kernel's last call, changed is found before the inputs are made, not after they have
        // put it back.
        refuse_if_tampered();
        refuse_code_that_could_run();
      }
      args_ = harness("make_inputs")(c_->inputs, seed, c_->device);
      if (!c_->untrusted) return;
      refuse_code_that_could_run();
      refuse_if_tampered();
      // The inputs as they are now, held here where every one is an ndarray; else the Python path's snapshot.
      held_in_.clear();
      for (nb::handle a : args_) {
        std::optional<Held> h = hold(a);
        if (!h) {
          held_in_.clear();
          break;
        }
        held_in_.push_back(std::move(*h));
      }
      const bool held = !held_in_.empty() && held_in_.size() == nb::len(args_);
      // Fresh inputs must differ: an inputs function that ignores its seed (or was made to) would
      // let a cache of answers hit.
      const std::string digest = held ? std::to_string(roofbench::python::digest(held_in_))
                                      : nb::cast<std::string>(harness("fingerprint")(args_));
      const auto [it, fresh] = seen_.emplace(digest, seed);
      if (!fresh && it->second != seed)
        throw std::runtime_error("the inputs of seeds " + std::to_string(it->second) + " and " + std::to_string(seed) +
                                 " are the same: the inputs function ignores its seed (or something changed it), so "
                                 "a cache of answers could not be told from work");
      snap_ = held ? nb::none() : harness("snapshot")(args_);
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
    // --untrusted: the outputs copied before anything else runs, the seals' comparison included.
    std::optional<std::vector<Held>> got;
    if (c_->untrusted && !held_in_.empty()) got = hold_outputs();
    const Collector off(c_->untrusted);
    refuse_if_tampered();
    if (c_->untrusted) refuse_code_that_could_run();
    Tolerance tol = tolerance_for(c_->precision, c_->growth);
    tol.abs_tol = std::max(tol.abs_tol, c_->atol);
    Checker checker(tol, "every element vs the reference, in FP64 (" + to_string(c_->precision) + " tolerance)");
    if (c_->untrusted && !held_in_.empty()) {
      if (got) {
        check_held(*got, checker);
        refuse_code_that_could_run();
        refuse_if_tampered();
        return checker.finish();
      }
    }
    if (c_->untrusted && bound().ndarray.is_valid()) {
      // A NumPy output is held in C++ or refused: the Python path is for arrays this cannot hold
      // (torch, cupy), not one a kernel chose to send there.
      for (nb::handle o : outputs())
        if (exact_ndarray(o) && !hold(o))
          throw std::runtime_error(
              "refused (--untrusted): the callable returned a NumPy array that is not C-contiguous, or of a type "
              "other than float, integer or bool: return a C-contiguous one (numpy.ascontiguousarray), which the "
              "check holds in C++");
    }
    nb::object pairs;
    if (c_->untrusted && !held_in_.empty()) inputs_unchanged();  // the inputs held here, the outputs not
    call_harness("the check", [&] {
      pairs = harness("host_pairs")(out_, args_, c_->reference, c_->device, c_->untrusted ? snap_ : nb::none(),
                                    c_->untrusted);
    });
    if (c_->untrusted && !held_in_.empty()) inputs_unchanged();
    if (c_->untrusted) refuse_code_that_could_run();
    refuse_if_tampered();
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
  // --untrusted: the collector off for as long as it lives (prepare, the check).
  struct Collector {
    bool was_on = false;
    explicit Collector(bool untrusted) {
      if (untrusted && nb::cast<bool>(guards().gc_isenabled())) {
        guards().gc_disable();
        was_on = true;
      }
    }
    ~Collector() {
      if (was_on) guards().gc_enable();
    }
  };

  // The outputs the call returned: the items of an exact tuple or list (a subclass's __iter__
  // would run in the check), else the one object.
  std::vector<nb::handle> outputs() const {
    std::vector<nb::handle> outs;
    if (PyTuple_CheckExact(out_.ptr()) || PyList_CheckExact(out_.ptr())) {
      for (nb::handle o : out_) outs.push_back(o);
    } else {
      outs.push_back(out_);
    }
    return outs;
  }

  // The outputs held here (an exact tuple or list of them, or one), each copied at once; none
  // where one is not an ndarray the C++ path reads (the Python path then takes them all).
  std::optional<std::vector<Held>> hold_outputs() const {
    std::vector<Held> got;
    for (nb::handle o : outputs()) {
      std::optional<Held> h = hold(o);
      if (!h) return std::nullopt;
      got.push_back(std::move(*h));
    }
    return got;
  }

  // The inputs as prepare held them: the same memory, shape, strides and format, and the same bytes.
  void inputs_unchanged() const {
    std::size_t i = 0;
    for (nb::handle a : args_) {
      const Held& was = held_in_.at(i);
      std::optional<Held> now = hold(a);
      const std::string what = "input " + std::to_string(i++);
      if (!now || now->ptr != was.ptr || now->shape != was.shape || now->strides != was.strides ||
          now->format != was.format)
        throw std::runtime_error("the callable changed " + what +
                                 " (its shape, strides, dtype or memory): the check would compare against a "
                                 "reference of inputs it chose");
      if (now->bytes != was.bytes)
        throw std::runtime_error("the callable changed the values of " + what +
                                 ": the check would compare against a reference of inputs it chose");
    }
  }

  // The check of held outputs: no Python code runs from the kernel's return to the copies, and the
  // comparison reads the copies. Messages as the Python path's (roofbench/_harness.py).
  void check_held(const std::vector<Held>& got, Checker& checker) {
    if (c_->reference.is_none()) throw std::runtime_error("no reference: a timing-only benchmark is not checked");
    for (const Held& o : got) {
      for (const Held& in : held_in_)
        if (o.ptr < in.ptr + in.len && in.ptr < o.ptr + o.len)
          throw std::runtime_error(
              "the callable returned its input (or a view of it): return a new array; an in-place kernel is "
              "checked against inputs it has changed, which proves nothing");
      if (o.readonly)
        throw std::runtime_error(
            "the callable returned a read-only array: the harness poisons every output before the next run, and a "
            "read-only one could be returned again unseen; return a writeable array");
    }
    inputs_unchanged();
    nb::object refs;
    call_harness("the check", [&] {
      nb::object r;
      try {
        r = c_->reference(*args_);
      } catch (nb::python_error& e) {
        throw std::runtime_error(one_line(e, "the reference"));
      }
      refs = harness("_arrays")(r);
    });
    inputs_unchanged();  // the reference saw what prepare made
    if (nb::len(refs) != got.size())
      throw std::runtime_error("the callable returned " + std::to_string(got.size()) + " output(s), the reference " +
                               std::to_string(nb::len(refs)));
    std::int64_t base = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const Held& o = got[i];
      nb::handle r = refs[i];
      const std::string which = got.size() == 1 ? "the callable" : "the callable's output " + std::to_string(i);
      nb::object want;
      std::string ref_shape, ref_dtype;
      call_harness("the check", [&] {
        want = harness("_to_host")(r, "the reference");
        ref_shape = nb::cast<std::string>(nb::repr(nb::tuple(nb::getattr(r, "shape"))));
        ref_dtype = nb::cast<std::string>(harness("_dtype_name")(r));
      });
      if (shape_text(o.shape) != ref_shape)
        throw std::runtime_error(which + " has shape " + shape_text(o.shape) + ", the reference's is " + ref_shape);
      if (o.dtype != ref_dtype)
        throw std::runtime_error(which + " has dtype " + o.dtype + ", the reference's is " + ref_dtype);
      using Host = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
      const auto w = nb::cast<Host>(want);
      const std::size_t n = o.bytes.size() / static_cast<std::size_t>(o.itemsize);
      if (w.shape(0) != n) throw std::runtime_error(which + ": its element count differs from the reference's");
      for (std::size_t k = 0; k < n; ++k)
        checker.check(o.read(o.bytes.data() + k * static_cast<std::size_t>(o.itemsize)), w(k),
                      base + static_cast<std::int64_t>(k));
      base += static_cast<std::int64_t>(n);
    }
  }

  void refuse_if_tampered() const {
    std::vector<const Seal*> which;
    for (const Seal& s : seals()) which.push_back(&s);
    for (const Seal& s : c_->own) which.push_back(&s);
    const std::vector<std::string> found = changes(which);
    if (!found.empty()) throw std::runtime_error(tamper_error(found));
  }

  template <class F>
  void call_harness(const std::string& who, F&& f) {
    try {
      f();
    } catch (nb::python_error& e) {
      // The harness's own messages (roofbench._harness.BadOutput) are already one line about the
      // callable; anything else is the user's function raising.
      if (nb::isinstance(e.value(), harness("BadOutput")))
        throw std::runtime_error(nb::cast<std::string>(nb::str(e.value())));
      throw std::runtime_error(one_line(e, who));
    }
  }

  std::shared_ptr<const Callable> c_;
  nb::object args_ = nb::tuple(), out_ = nb::none(), snap_ = nb::none();
  std::vector<Held> held_in_;                  // --untrusted: the inputs as prepare made them, where held here
  std::map<std::string, std::uint64_t> seen_;  // --untrusted: each seed's inputs' digest
};

void add(const std::string& family, const std::string& variant, const std::string& precision, nb::object fn,
         nb::object inputs, nb::object reference, const std::map<std::string, std::int64_t>& params, double flops,
         double bytes, const std::string& level, const std::string& unit, const std::string& backend,
         const std::string& compared_with, double growth, double atol, bool warm, bool untrusted) {
  refuse_while_running("add");
  auto c = std::make_shared<Callable>();
  c->fn = std::move(fn);
  c->inputs = std::move(inputs);
  c->reference = std::move(reference);
  c->untrusted = untrusted;
  // The kernel's own namespace is its to change; the task's is not.
  const nb::object fn_globals = nb::getattr(c->fn, "__globals__", nb::none());
  for (auto [what, obj] : {std::pair<const char*, nb::handle>{"the reference", c->reference}, {"the inputs function", c->inputs}}) {
    if (obj.is_none()) continue;
    Seal one{what, nb::borrow(obj), false, true, {}, {}};
    one.entries = snapshot(one, false);
    c->own.push_back(std::move(one));
    // --untrusted: the namespace its code reads (its module's, by __globals__), every name in it
    // (the task's N as much as its helpers), where the kernel is not defined in it too.
    nb::object globals = nb::getattr(obj, "__globals__", nb::none());
    if (!untrusted || !PyDict_Check(globals.ptr()) || globals.is(fn_globals)) continue;
    bool sealed = false;
    for (const Seal& s : c->own) sealed = sealed || s.owner.is(globals);
    for (const Seal& s : seals()) sealed = sealed || s.owner.is(globals);  // the score command's, already
    if (sealed) continue;
    nb::object name = nb::borrow<nb::dict>(globals).contains("__name__") ? nb::borrow<nb::dict>(globals)["__name__"]
                                                                          : nb::object(nb::str("?"));
    Seal ns{std::string(what) + "'s module " + nb::cast<std::string>(nb::str(name)), globals, true, false, {}, {}};
    ns.entries = snapshot(ns, true);
    c->own.push_back(std::move(ns));
  }
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
        nb::arg("warm"), nb::arg("untrusted") = false);
  // Sealing (see `seal` above): roofbench's package seals its own modules, classes and the
  // libraries its check uses as it is imported; `python -m roofbench score` seals its own module.
  m.def("seal", &seal, nb::arg("owner"), nb::arg("where"), nb::arg("strict") = false, nb::arg("single") = false,
        nb::arg("names") = std::vector<std::string>{});
  m.def("bind", &bind, nb::arg("harness"), nb::arg("ndarray").none());
  m.def(
      "bind_array_types",
      [](std::vector<std::pair<nb::object, std::string>> types, bool pin) {
        if (bound().types_pinned) return;
        bound().types = std::move(types);
        bound().types_pinned = pin;
      },
      nb::arg("types"), nb::arg("pin") = false);
  // The kind of an array of a bound type itself, else None; and of a subclass of one (for the
  // message). Type identity and PyType_IsSubtype: no Python code runs.
  m.def("array_kind", [](nb::handle x) -> nb::object {
    for (const auto& [t, kind] : bound().types)
      if (reinterpret_cast<PyObject*>(Py_TYPE(x.ptr())) == t.ptr()) return nb::str(kind.c_str());
    return nb::none();
  }, nb::arg("x").none());
  m.def("array_kind_of_subclass", [](nb::handle x) -> nb::object {
    for (const auto& [t, kind] : bound().types)
      if (PyType_Check(t.ptr()) && PyType_IsSubtype(Py_TYPE(x.ptr()), reinterpret_cast<PyTypeObject*>(t.ptr())))
        return nb::str(kind.c_str());
    return nb::none();
  }, nb::arg("x").none());
  m.def("tampered", &library_changes);
  m.def("code_that_could_run", &code_that_could_run);
  // `python -m roofbench score`, before any kernel's file runs: the threads there are now are the
  // process's own; any more when a check runs are a kernel's (--untrusted).
  m.def(
      "count_threads_from_here",
      [](bool pin) {
        Guards& g = guards();
        if (g.pinned) return;
        g.threads_at_start = python_threads();
        g.pinned = pin;
        g.handlers.clear();
        for (nb::handle sig : g.valid_signals()) {
          const int n = nb::cast<int>(sig);
          g.handlers.emplace_back(n, g.getsignal(n));
        }
        g.callbacks = PyList_Check(g.gc_callbacks.ptr()) ? PyList_GET_SIZE(g.gc_callbacks.ptr()) : 0;
        g.threshold = g.gc_get_threshold();
      },
      nb::arg("pin") = false);
  {
    nb::module_ gc = nb::module_::import_("gc"), sys = nb::module_::import_("sys"),
                signal = nb::module_::import_("signal");
    guards().gc_disable = gc.attr("disable");
    guards().gc_enable = gc.attr("enable");
    guards().gc_isenabled = gc.attr("isenabled");
    guards().gc_callbacks = gc.attr("callbacks");  // the list the collector calls, whatever gc.callbacks is later
    guards().gc_get_threshold = gc.attr("get_threshold");
    guards().getsignal = signal.attr("getsignal");
    guards().getitimer = signal.attr("getitimer");
    guards().valid_signals = signal.attr("valid_signals");
    for (const char* t : {"ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"})
      if (nb::hasattr(signal, t)) guards().itimers.push_back(nb::cast<int>(signal.attr(t)));
    nb::object monitoring = nb::getattr(sys, "monitoring", nb::none());
    guards().get_tool = monitoring.is_none() ? nb::none() : nb::getattr(monitoring, "get_tool", nb::none());
  }
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

// CUPTI's Range Profiler (cupti_range_profiler.h, CUDA 12.6+; the pass-based cuptiProfiler*
// session API is deprecated in 13.0) with the Profiler Host API, in user-range, user-replay
// mode: one range around one run of the kernel, replayed by us until CUPTI has every pass.
// Call order (../shared/reference/roofline_cupti.md §7.1):
//   open:    cuptiProfilerInitialize → DeviceSupported → DeviceGetChipName → GetCounterAvailability
//   collect: RangeProfilerEnable → GetCounterDataSize → CounterDataImageInitialize → SetConfig →
//            { prepare inputs, flush; Start; PushRange; run; PopRange; Stop; sync } until all passes
//            → DecodeData → GetCounterDataInfo → EvaluateToGpuValues → RangeProfilerDisable
// Before the profiled passes, the Activity API (§7.3) records kTraceRuns more runs of the kernel
// (CONCURRENT_KERNEL: the GPU's own start and end stamps of each kernel) as a cross-check of the
// event timing: ActivityEnable → { flush caches; FlushAll; run; sync; FlushAll } → ActivityDisable.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_activity.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <cupti_version.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "bench/counters.h"
#include "roofbench/cuda.h"
#include "roofbench/types.h"
#include "roofline/cupti/cupti_check.h"
#include "roofline/cupti/host.h"
#include "roofline/cupti/metrics.h"

namespace roofbench {
namespace {

using cupti::CuptiError;

// The driver's current context, without linking libcuda (the binary must start on machines
// with no driver at all): the runtime hands out the driver's entry point.
CUcontext current_context() {
  using Fn = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q));
  if (!fn || q != cudaDriverEntryPointSuccess) throw std::runtime_error("cuCtxGetCurrent not found in the driver");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<Fn>(fn)(&ctx) != CUDA_SUCCESS || !ctx) throw std::runtime_error("no current CUDA context");
  return ctx;
}

CUdevice driver_device(int index) {
  using Fn = CUresult (*)(CUdevice*, int);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuDeviceGet", &fn, 12000, cudaEnableDefault, &q));
  CUdevice d = 0;
  if (!fn || q != cudaDriverEntryPointSuccess || reinterpret_cast<Fn>(fn)(&d, index) != CUDA_SUCCESS)
    throw std::runtime_error("cuDeviceGet failed");
  return d;
}

// ---- the Activity API's kernel and copy records
// CUPTI hands buffers to plain functions, so the records of the trace in progress go to one
// process-wide sink (set only while a trace runs, on the calling thread).
struct KernelRecord {
  std::uint64_t start = 0, end = 0;  // ns, GPU timestamps
  std::string name;                  // a kernel's; empty for a copy
  std::uint32_t stream = 0;
  bool copy = false;
};
std::vector<KernelRecord>* g_records = nullptr;
std::size_t g_unstamped = 0;  // records of the trace in progress that came without timestamps

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  constexpr std::size_t kBytes = 4u << 20;  // 1-10 MB recommended; a run has a handful of kernels
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBytes));
  *size = *buffer ? kBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && g_records) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      if (k->start != 0 && k->end != 0)  // a 0: CUPTI could not stamp it (or not yet)
        g_records->push_back({k->start, k->end, k->name ? k->name : "?", k->streamId, false});
      else
        ++g_unstamped;
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY && g_records) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      if (m->start != 0 && m->end != 0)
        g_records->push_back({m->start, m->end, "", m->streamId, true});
      else
        ++g_unstamped;
    }
  std::free(buffer);
}

constexpr int kTraceRuns = 5;

std::string list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

class RangeProfiler final : public CounterCollector {
 public:
  RangeProfiler(int index, std::vector<std::string> user) : index_(index), user_(std::move(user)) {}
  ~RangeProfiler() override {
    configs_.clear();  // each holds a host object of its own: deinitialized before the profiler is
    host_.reset();
    if (initialized_) {
      auto p = CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
      CUPTI_CHECK_NOEXCEPT(cuptiProfilerDeInitialize(&p));
    }
  }

  // Everything that can fail before a kernel runs. Counters and the kernel trace are set up on
  // their own: the trace needs no permission to read counters (reference §0.6), so a machine
  // without that permission still gets the timing cross-check. Afterwards counting() and
  // tracing() say which of the two this collector does; disabled_ says why counters are off.
  void open() {
    CUDA_CHECK(cudaSetDevice(index_));
    CUDA_CHECK(cudaFree(nullptr));  // the primary context exists from here on
    ctx_ = current_context();
    try {
      open_profiler();
    } catch (const CuptiError& e) {
      end_counters(cupti::explain_failure(e.code, e.call));
      host_.reset();
    } catch (const InputError& e) {  // a chip this CUPTI has no metrics for
      disabled_ = e.what();
      host_.reset();
    }
    // Kernel records (the timing cross-check); a failure here costs the trace, not the counters.
    try {
      CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    } catch (const CuptiError& e) {
      trace_disabled_ = cupti::explain_failure(e.code, e.call).reason;
    }
  }

  bool counting() const { return disabled_.empty(); }
  bool tracing() const { return trace_disabled_.empty(); }
  const std::string& reason() const { return disabled_; }
  const std::string& hint() const { return disabled_hint_; }

  // Throws InputError for --metrics names the chip does not have, or a list CUPTI will not
  // schedule together. With counters off there is nothing to collect, but a misspelt name is
  // still worth saying, when CUPTI named the chip.
  void require_user_metrics() {
    if (user_.empty()) return;
    if (host_) {
      host_->require_known(user_, "--metrics");
      try {
        config(user_);  // kept for the run: every benchmark uses this configuration
      } catch (const CuptiError& e) {  // the device's, not the list's (that is an InputError)
        end_counters(cupti::explain_failure(e.code, e.call));
      }
      return;
    }
    if (chip_.empty()) return;
    std::unique_ptr<cupti::MetricHost> host;
    try {
      host = std::make_unique<cupti::MetricHost>(chip_);
    } catch (const std::exception&) {
      return;  // a chip CUPTI has no metrics for: disabled_ already says so
    }
    host->require_known(user_, "--metrics");
    try {
      host->configure(user_);
    } catch (const CuptiError&) {  // counters are off already; only the list's own fault is said
    }
  }

  std::vector<std::string> metrics_for(const BenchmarkResult& b) override {
    if (!user_.empty()) return user_;
    if (!host_) return cupti::default_metrics(b);  // counters off: what it would have read
    // A default name this chip lacks (the sets are Hopper's) is left out and listed in the status.
    std::vector<std::string> out;
    for (const auto& m : cupti::default_metrics(b)) {
      auto it = known_.find(m);
      if (it == known_.end()) it = known_.emplace(m, host_->unknown({m}).empty()).first;
      if (it->second)
        out.push_back(m);
      else if (std::find(dropped_.begin(), dropped_.end(), m) == dropped_.end())
        dropped_.push_back(m);
    }
    return out;
  }

  int passes_for(const std::vector<std::string>& metrics) override {
    try {
      return config(metrics).passes();
    } catch (const CuptiError&) {  // this device's refusal: each benchmark's counters say it
      return 0;
    } catch (const InputError&) {
      if (!user_.empty()) throw;  // checked before the run already; a default set is not the user's
      return 0;
    }
  }

  void collect(Device& dev, Instance& inst, BenchmarkResult& b, std::uint64_t seed, bool cold) override {
    b.counters = counters(dev, inst, b, seed, cold);
    const Counters& c = *b.counters;
    // The Activity API's kernel records against the event timing: a warning of the profiler's own.
    if (c.trace && !c.trace->error.empty()) b.warnings.push_back("trace: " + c.trace->error);
    if (std::string w = cupti::flops_warning(c, b.flops); !w.empty()) b.warnings.push_back(std::move(w));
    if (b.measurement)
      if (const auto t = cupti::trace_check(c, *b.measurement))
        if (std::string w = cupti::trace_warning(*t); !w.empty()) b.warnings.push_back(std::move(w));
  }

  Counters counters(Device& dev, Instance& inst, const BenchmarkResult& b, std::uint64_t seed, bool cold) {
    Counters c;
    c.set = user_.empty() ? "default" : "user";
    c.metrics = metrics_for(b);
    c.trace = trace(dev, inst, cold);
    if (!disabled_.empty()) {
      c.error = "not collected: " + disabled_;
      return c;
    }
    try {
      const cupti::MetricConfig& cfg = config(c.metrics);
      c.passes = cfg.passes();
      const std::vector<double> values = profile(dev, inst, seed, cold, cfg);
      for (std::size_t i = 0; i < c.metrics.size(); ++i) c.values[c.metrics[i]] = values[i];
      cupti::derive(c);
    } catch (const CuptiError& e) {
      const cupti::Failure f = cupti::explain_benchmark_failure(e.code, e.call);
      c.error = f.reason;
      c.values.clear();
      if (cupti::ends_session(e.code)) end_counters(f);
    } catch (const std::exception& e) {
      c.error = std::string("counter collection failed: ") + e.what();
      c.values.clear();
    }
    return c;
  }

  nlohmann::json status() const override {
    nlohmann::json j = {{"requested", true},
                        {"available", disabled_.empty()},
                        {"api", "CUPTI Range Profiler (user range, user replay) + Profiler Host API"},
                        {"cupti_api_version", CUPTI_API_VERSION},
                        {"chip", chip_},
                        {"metrics", user_.empty() ? nlohmann::json("default") : nlohmann::json(user_)},
                        {"pass_budget", cupti::kPassBudget},
                        {"timing",
                         "never from a profiled run: counters come from a separate pass after the timed "
                         "samples, inputs made afresh and caches flushed as for timing before every "
                         "replay pass"},
                        {"trace", fmt::format("CUPTI Activity API (CONCURRENT_KERNEL): {} more runs per benchmark "
                                              "before its profiled passes, caches flushed as for timing; a "
                                              "cross-check of the event timing, never its source",
                                              kTraceRuns)}};
    if (!trace_disabled_.empty()) j["trace_unavailable"] = trace_disabled_;
    if (!disabled_.empty()) j["reason"] = disabled_;
    if (!disabled_hint_.empty()) j["hint"] = disabled_hint_;
    if (!dropped_.empty()) j["unavailable_metrics"] = dropped_;
    return j;
  }

  const std::string& chip() const { return chip_; }

 private:
  // The Range Profiler's setup, in the reference's order; throws CuptiError, or sets disabled_
  // when the device cannot be profiled.
  void open_profiler() {
    auto init = CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    CUPTI_CHECK(cuptiProfilerInitialize(&init));
    initialized_ = true;

    auto sup = CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
    sup.cuDevice = driver_device(index_);
    sup.api = CUPTI_PROFILER_RANGE_PROFILING;
    CUPTI_CHECK(cuptiProfilerDeviceSupported(&sup));
    cupti::DeviceSupport s;
    s.overall = sup.isSupported;
    s.architecture = sup.architecture;
    s.sli = sup.sli;
    s.vgpu = sup.vGpu;
    s.confidential_compute = sup.confidentialCompute;
    s.cmp = sup.cmp;
    s.wsl = sup.wsl;
    if (std::string why = cupti::unsupported_reason(s); !why.empty()) {
      disabled_ = why;
      return;
    }

    auto chip = CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
    chip.deviceIndex = static_cast<std::size_t>(index_);
    CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
    chip_ = chip.pChipName ? chip.pChipName : "";

    // Privileges show up here first (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES).
    auto av = CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
    av.ctx = ctx_;
    CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&av));
    std::vector<std::uint8_t> availability(av.counterAvailabilityImageSize);
    av.pCounterAvailabilityImage = availability.data();
    CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&av));
    host_ = std::make_unique<cupti::MetricHost>(chip_, std::move(availability));
  }

  // kTraceRuns runs of `inst` as the timed samples ran (caches flushed when cold, inputs as they
  // are), each kernel's GPU start and end from the Activity API. Never throws: a failure is the
  // trace's error, and one that holds for the session stops tracing (the status says why; later
  // benchmarks get no trace rather than the same error each).
  std::optional<KernelTrace> trace(Device& dev, Instance& inst, bool cold) {
    if (!trace_disabled_.empty()) return std::nullopt;
    KernelTrace t;
    std::vector<KernelRecord> records;
    g_records = &records;
    try {
      // Set up before the first enable: a kind left enabled would trace every later timed sample.
      struct Disable {
        bool kernels = false, copies = false;
        ~Disable() {
          if (copies) CUPTI_CHECK_NOEXCEPT(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
          if (kernels) CUPTI_CHECK_NOEXCEPT(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
          CUPTI_CHECK_NOEXCEPT(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
          g_records = nullptr;
        }
      } disable;
      CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
      disable.kernels = true;
      CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
      disable.copies = true;
      dropped_records();  // the count is since the last call: this benchmark's starts at zero
      for (int run = 0; run < kTraceRuns; ++run) {
        if (cold) dev.flush_cache();
        dev.synchronize();
        CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
        records.clear();  // the cache flush's kernel
        g_unstamped = 0;
        inst.run();
        dev.synchronize();
        CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
        // A forced flush hands over incomplete records too: said as such, not as a run that
        // launched other kernels than the first.
        if (g_unstamped)
          throw std::runtime_error(fmt::format("CUPTI delivered {} record(s) of run {} without timestamps after a device "
                                               "synchronize",
                                               g_unstamped, run + 1));
        if (records.empty()) throw std::runtime_error("CUPTI delivered no kernel or copy record for the run");
        std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
        std::vector<std::string> names;
        std::vector<cupti::Interval> intervals;
        std::set<std::uint32_t> streams;
        std::size_t copies = 0;
        for (const auto& r : records) {
          if (r.copy)
            ++copies;
          else
            names.push_back(cupti::kernel_name(r.name));
          intervals.push_back({r.start, r.end});
          streams.insert(r.stream);
        }
        if (run == 0) {
          t.kernels = names;
          t.copies = copies;
          t.streams = streams.size();
        } else if (names != t.kernels || copies != t.copies) {
          throw std::runtime_error(fmt::format("run {} launched other kernels ({}) or copies ({}) than run 1 ({}; {})",
                                               run + 1, list(names), copies, list(t.kernels), t.copies));
        }
        const cupti::Concurrency cc = cupti::concurrency(intervals);
        t.span_s.push_back(cc.span_s);
        t.busy_s.push_back(cc.busy_s);
        t.overlap_s.push_back(cc.overlap_s);
      }
      if (const std::size_t dropped = dropped_records())
        throw std::runtime_error(fmt::format("CUPTI dropped {} activity record(s)", dropped));
    } catch (const CuptiError& e) {
      const cupti::Failure f = cupti::explain_benchmark_failure(e.code, e.call);
      t = KernelTrace{};
      t.error = f.reason;
      if (cupti::ends_session(e.code)) trace_disabled_ = f.reason;
    } catch (const std::exception& e) {
      t = KernelTrace{};
      t.error = std::string("kernel trace failed: ") + e.what();
    }
    g_records = nullptr;
    return t;
  }

  // Counters off for the rest of the session, with why and the fix where there is one.
  void end_counters(const cupti::Failure& f) {
    disabled_ = f.reason;
    disabled_hint_ = f.hint;
  }

  // Activity records dropped since the last call (each call resets the count). Buffers are
  // global since CUDA 6.0, so the queue that counts is the global one (a null context), as in
  // CUPTI's samples, whose buffer callback gets a null context.
  static std::size_t dropped_records() {
    std::size_t dropped = 0;
    CUPTI_CHECK(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
    return dropped;
  }

  // One configuration per distinct metric list, kept for the session: it owns the host object
  // that evaluates the counter data made with it.
  const cupti::MetricConfig& config(const std::vector<std::string>& metrics) {
    const std::string key = list(metrics);
    auto it = configs_.find(key);
    if (it == configs_.end()) it = configs_.emplace(key, host_->configure(metrics)).first;
    return *it->second;
  }

  std::vector<double> profile(Device& dev, Instance& inst, std::uint64_t seed, bool cold,
                              const cupti::MetricConfig& cfg) {
    const std::vector<std::string>& metrics = cfg.metrics();
    const int expected_passes = cfg.passes();
    // Declared before the Session guard, so they outlive cuptiRangeProfilerDisable: the counter
    // data image belongs to the range profiler object until it is disabled.
    std::vector<const char*> names;
    for (const auto& m : metrics) names.push_back(m.c_str());
    std::vector<std::uint8_t> data;
    auto en = CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    en.ctx = ctx_;
    CUPTI_CHECK(cuptiRangeProfilerEnable(&en));
    CUpti_RangeProfiler_Object* obj = en.pRangeProfilerObject;
    // Undone in reverse whatever fails: a range left pushed is popped and a started profiler
    // stopped before it is disabled. One that will not disable stays enabled on the context, so
    // counters end for the session, saying why.
    struct Session {
      CUpti_RangeProfiler_Object* obj;
      std::string* disabled;
      bool started = false, pushed = false;
      ~Session() {
        if (pushed) {
          auto p = CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
          p.pRangeProfilerObject = obj;
          CUPTI_CHECK_NOEXCEPT(cuptiRangeProfilerPopRange(&p));
        }
        if (started) {
          auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
          p.pRangeProfilerObject = obj;
          CUPTI_CHECK_NOEXCEPT(cuptiRangeProfilerStop(&p));
        }
        auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
        p.pRangeProfilerObject = obj;
        if (const CUptiResult r = cuptiRangeProfilerDisable(&p); r != CUPTI_SUCCESS && disabled->empty()) {
          try {
            *disabled = "CUPTI's range profiler could not be disabled after a benchmark's counters (" +
                        cupti::cupti_result_name(r) + " from cuptiRangeProfilerDisable); no later benchmark is profiled";
          } catch (...) {  // a destructor: out of memory here must not end the process
          }
        }
      }
    } session{obj, &disabled_};

    auto sz = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    sz.pRangeProfilerObject = obj;
    sz.pMetricNames = names.data();
    sz.numMetrics = names.size();
    sz.maxNumOfRanges = 1;
    sz.maxNumRangeTreeNodes = 1;
    CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&sz));
    data.assign(sz.counterDataSize, 0);
    auto di = CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    di.pRangeProfilerObject = obj;
    di.counterDataSize = data.size();
    di.pCounterData = data.data();
    CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&di));

    auto sc = CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    sc.pRangeProfilerObject = obj;
    sc.configSize = cfg.image().size();
    sc.pConfig = cfg.image().data();
    sc.counterDataImageSize = data.size();
    sc.pCounterDataImage = data.data();
    sc.range = CUPTI_UserRange;
    sc.replayMode = CUPTI_UserReplay;
    sc.maxRangesPerPass = 1;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    CUPTI_CHECK(cuptiRangeProfilerSetConfig(&sc));

    bool all_submitted = false;
    for (int pass = 0; !all_submitted; ++pass) {
      if (pass > expected_passes + 2)
        throw std::runtime_error(fmt::format("CUPTI asked for more than {} replay passes", expected_passes + 2));
      // Every pass sees the work the timed samples saw: the same inputs, the same cache state.
      inst.prepare(seed);
      if (cold) dev.flush_cache();
      dev.synchronize();
      auto st = CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
      st.pRangeProfilerObject = obj;
      CUPTI_CHECK(cuptiRangeProfilerStart(&st));
      session.started = true;
      auto push = CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
      push.pRangeProfilerObject = obj;
      push.pRangeName = "roofbench";
      CUPTI_CHECK(cuptiRangeProfilerPushRange(&push));
      session.pushed = true;
      inst.run();
      // The range closes after every stream the run used is done: nothing promises that CUPTI's
      // end-of-range marker waits for work queued on streams other than the one it goes into.
      dev.synchronize();
      auto pop = CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
      pop.pRangeProfilerObject = obj;
      CUPTI_CHECK(cuptiRangeProfilerPopRange(&pop));
      session.pushed = false;
      auto stop = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
      stop.pRangeProfilerObject = obj;
      CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
      session.started = false;
      dev.synchronize();
      all_submitted = stop.isAllPassSubmitted != 0;
    }
    auto dec = CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    dec.pRangeProfilerObject = obj;
    CUPTI_CHECK(cuptiRangeProfilerDecodeData(&dec));
    if (dec.numOfRangeDropped) throw std::runtime_error(fmt::format("CUPTI dropped {} range(s)", dec.numOfRangeDropped));
    auto info = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
    info.pCounterDataImage = data.data();
    info.counterDataImageSize = data.size();
    CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
    if (info.numTotalRanges != 1)
      throw std::runtime_error(fmt::format("expected 1 profiled range, CUPTI has {}", info.numTotalRanges));
    return cfg.evaluate(data, 0);
  }

  int index_;
  std::vector<std::string> user_;
  bool initialized_ = false;
  CUcontext ctx_ = nullptr;
  std::string chip_;
  std::unique_ptr<cupti::MetricHost> host_;
  std::map<std::string, std::shared_ptr<const cupti::MetricConfig>> configs_;
  std::map<std::string, bool> known_;
  std::vector<std::string> dropped_;
  std::string disabled_, disabled_hint_;
  std::string trace_disabled_;
};

nlohmann::json unavailable(const std::string& reason, const std::string& hint) {
  nlohmann::json j = {{"requested", true}, {"available", false}, {"reason", reason}};
  if (!hint.empty()) j["hint"] = hint;
  return j;
}

}  // namespace

std::unique_ptr<CounterCollector> open_counters(Device& dev, const CounterRequest& req, nlohmann::json* status) {
  if (!req.enabled) {
    *status = nullptr;
    return nullptr;
  }
  if (dev.backend() != Backend::cuda) {
    *status = unavailable("hardware counters are read on CUDA devices only (this run is on the CPU)", "");
    return nullptr;
  }
  auto p = std::make_unique<RangeProfiler>(dev.describe().value("index", 0), req.metrics);
  try {
    p->open();
  } catch (const CuptiError& e) {
    const cupti::Failure f = cupti::explain_failure(e.code, e.call);
    *status = unavailable(f.reason, f.hint);
    return nullptr;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    *status = unavailable(std::string("counters unavailable: ") + e.what(), "");
    return nullptr;
  }
  if (!p->counting() && !p->tracing()) {
    *status = unavailable(p->reason(), p->hint());
    return nullptr;
  }
  p->require_user_metrics();  // InputError: bad --metrics stop the run before it starts
  *status = p->status();
  return p;
}

}  // namespace roofbench

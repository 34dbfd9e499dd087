#include "bench/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"

namespace roofbench {

namespace {
std::vector<Variant>& mutable_registry() {
  static std::vector<Variant> r;  // function-local: safe from static initialization order
  return r;
}

[[noreturn]] void bad_declaration(const Variant& v, const char* why) {
  std::fprintf(stderr, "roofbench: bad variant declaration %s (%s): %s\n", v.base_name().c_str(), v.source.c_str(),
               why);
  std::abort();
}
}  // namespace

std::string Variant::base_name() const {
  return family + "/" + variant + "/" + to_string(precision);
}

const std::vector<Variant>& registry() {
  return mutable_registry();
}

Verification Instance::verify() {
  Verification v;
  v.method = "none";
  v.detail = "Instance::verify() is not implemented: check the output against the variant's reference there";
  return v;
}

namespace {
// What is wrong with a declaration, in a line; "" when nothing is. Fills in the defaults
// (quick_sizes, test_sizes) on the way.
std::string declaration_problem(Variant& v) {
  if (v.family.empty() || v.variant.empty()) return "family and variant are required";
  if (v.reference.empty() && !v.timing_only)
    return "no reference: every kernel is checked before it is timed. Say what its output is checked "
           "against (v.reference = \"an FP64 loop over the same inputs\") and check it in "
           "Instance::verify(), e.g. with roofbench::check_all; or, to time it unchecked, declare "
           "v.timing_only = true (its numbers are then marked unverified in every report)";
  if (v.timing_only && !v.reference.empty())
    return "timing_only means no reference, but it names one: drop one or the other";
  if (v.timing_only && (v.builtin || v.ceiling))
    return "roofbench's own kernels and the ceilings are always verified: timing_only is for yours";
  if ((v.backend == Backend::cpu) != (v.unit == Unit::simd)) return "the CPU's unit is simd; a GPU's simt or tensor";
  if (!v.make) return "make is required";
  if (v.work.empty()) return "no declared work (Variant::work)";
  if (v.sizes.empty()) return "no sizes (Variant::sizes)";
  if (v.quick_sizes.empty()) v.quick_sizes = {v.sizes.front()};
  if (v.test_sizes.empty()) v.test_sizes = v.quick_sizes;
  for (const auto* sizes : {&v.sizes, &v.quick_sizes, &v.test_sizes})
    for (const auto& p : *sizes) {
      double flops = 0, bytes = 0;
      try {
        flops = v.work.flops(p);
        bytes = v.work.bytes(p);
      } catch (const std::out_of_range& e) {  // a term names a parameter the size lacks
        return e.what();
      }
      if (!(flops >= 0) || !std::isfinite(flops) || !(bytes >= 0) || !std::isfinite(bytes))
        return fmt::format(
            "declares {:g} FLOPs and {:g} bytes at {}: the reader refuses work that is "
            "negative or not finite",
            flops, bytes, v.name(p));
    }
  // A ceiling is one number per run: one size, and a name no other ceiling of its backend has.
  if (v.ceiling && (v.sizes.size() != 1 || v.quick_sizes.size() != 1))
    return "a ceiling is measured at one size (Variant::sizes and quick_sizes hold one each)";
  if (v.ceiling && !v.ceiling->repeat_param.empty()) {
    const CeilingSpec& c = *v.ceiling;
    if (c.repeat_min < 1 || c.repeat_step < 1) return "the ceiling's repeat_min and repeat_step are at least 1";
    for (const auto* sizes : {&v.sizes, &v.quick_sizes})  // (test sizes may be smaller: they are not scaled)
      for (const auto& p : *sizes)
        if (std::none_of(p.begin(), p.end(), [&](const auto& kv) {
              return kv.first == c.repeat_param && kv.second >= c.repeat_min && kv.second % c.repeat_step == 0;
            }))
          return fmt::format(
              "the ceiling's repeat_param '{}' is not a param of at least {} (repeat_min) in steps of {} "
              "(repeat_step) in {}",
              c.repeat_param, c.repeat_min, c.repeat_step, v.name(p));
  }
  if (v.ceiling)
    for (const auto& other : mutable_registry())
      if (other.ceiling && other.backend == v.backend && other.ceiling->name == v.ceiling->name)
        return fmt::format("ceiling '{}' is declared by {} too: a run holds each ceiling once", v.ceiling->name,
                           other.base_name());
  {  // the names results.json carries, as its reader would refuse them
    const Params& p = v.sizes.front();
    std::vector<std::pair<std::string, std::string>> names;  // (what, name)
    for (const WorkPhase& ph : v.work.phases(p))
      if (!ph.ceiling.empty()) names.emplace_back("a pass's ceiling", ph.ceiling);
    if (!v.work.pipeline_link().empty()) names.emplace_back("the shared link's ceiling", v.work.pipeline_link());
    for (const auto& [function, calls] : v.work.transcendentals(p)) names.emplace_back("a math function", function);
    for (const auto& [path, count] : v.work.launches(p)) names.emplace_back("a launch path", path);
    if (v.ceiling && !v.ceiling->function.empty()) names.emplace_back("the ceiling's function", v.ceiling->function);
    if (v.ceiling && !v.ceiling->reference_for.empty())
      names.emplace_back("the ceiling it is the reference for", v.ceiling->reference_for);
    for (const auto& [what, name] : names)
      if (!valid_declared_name(name))
        return fmt::format("{} '{}' is not a name results.json can carry: [a-z0-9_.], at most {} characters", what,
                           name, kMaxDeclaredName);
  }
  if (v.ceiling && v.ceiling->reference_for == v.ceiling->name)
    return "a ceiling cannot be the reference for itself (CeilingSpec::reference_for)";
  if (!v.only_on.empty() && (v.backend != Backend::cuda || !std::regex_match(v.only_on, std::regex(R"(\d+\.\d+)"))))
    return "only_on is a compute capability such as 9.0, for CUDA variants";
  for (const auto& other : mutable_registry())
    if (other.backend == v.backend && other.base_name() == v.base_name())
      return "registered twice for the same backend";
  return "";
}

}  // namespace

bool register_variant(Variant v, const char* source, bool builtin) {
  v.source = source;
  v.builtin = builtin;
  if (const std::string why = declaration_problem(v); !why.empty()) bad_declaration(v, why.c_str());
  mutable_registry().push_back(std::move(v));
  return true;
}

void register_variant_at_run_time(Variant v, const std::string& source) {
  v.source = source;
  v.builtin = false;
  if (const std::string why = declaration_problem(v); !why.empty())
    throw InputError("bad benchmark declaration " + v.base_name() + ": " + why);
  mutable_registry().push_back(std::move(v));
}

void forget_variants(const std::string& source) {
  auto& r = mutable_registry();
  r.erase(std::remove_if(r.begin(), r.end(), [&](const Variant& v) { return v.source == source; }), r.end());
}

std::string not_here(const Variant& v, const std::string& compute_capability) {
  if (v.only_on.empty() || v.only_on == compute_capability) return "";
  auto sm = [](std::string cc) {
    cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
    return "sm_" + cc;
  };
  return fmt::format("built for {}a only; this GPU is {}", sm(v.only_on),
                     compute_capability.empty() ? std::string("not a GPU") : sm(compute_capability));
}

std::vector<Params> square_gemm_sizes(std::initializer_list<std::int64_t> ns) {
  std::vector<Params> out;
  for (auto n : ns) out.push_back({{"M", n}, {"N", n}, {"K", n}});
  return out;
}

std::vector<Params> vector_sizes(std::initializer_list<std::int64_t> ns) {
  std::vector<Params> out;
  for (auto n : ns) out.push_back({{"n", n}});
  return out;
}

}  // namespace roofbench

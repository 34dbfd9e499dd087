#include "roofbench/work.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace roofbench {

namespace {
std::string number(double v) {
  if (v == static_cast<double>(static_cast<long long>(v))) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:g}", v);
}
}  // namespace

Count Count::param(const std::string& name) {
  Count c;
  c.params_.push_back(name);
  return c;
}

Count Count::constant(const std::string& name, double value) {
  Count c;
  c.constants_.emplace_back(name, value);
  return c;
}

Count operator*(Count a, const Count& b) {
  a.coef_ *= b.coef_;
  a.params_.insert(a.params_.end(), b.params_.begin(), b.params_.end());
  a.constants_.insert(a.constants_.end(), b.constants_.begin(), b.constants_.end());
  return a;
}

double Count::value(const Params& p) const {
  double v = coef_;
  for (const auto& name : params_) v *= static_cast<double>(roofbench::param(p, name));
  for (const auto& [name, value] : constants_) v *= value;
  return v;
}

std::vector<std::string> Count::factors() const {
  std::vector<std::string> f = params_;
  for (const auto& [name, value] : constants_) f.push_back(name);
  std::sort(f.begin(), f.end());
  return f;
}

std::string Count::text() const {
  std::string s = coef_ == 1 && (!params_.empty() || !constants_.empty()) ? "" : number(coef_);
  for (const auto& f : factors()) s += (s.empty() ? "" : "·") + f;
  return s;
}

void Work::add(Term t) {
  t.phase = phase_names_.empty() ? 0 : static_cast<int>(phase_names_.size()) - 1;
  terms_.push_back(std::move(t));
}

Work& Work::phase(const std::string& name, const std::string& ceiling) {
  if (phase_names_.empty() && !terms_.empty())
    throw std::logic_error("Work::phase('" + name + "'): the terms before it belong to no pass");
  phase_names_.push_back(name);
  phase_ceilings_.push_back(ceiling);
  return *this;
}

Work& Work::pipelined(Count chunks, std::optional<Count> streams) {
  chunks_ = std::move(chunks);
  streams_ = std::move(streams);
  return *this;
}

Work& Work::shared_link(const std::string& ceiling) {
  if (!chunks_) throw std::logic_error("Work::shared_link('" + ceiling + "'): only a pipeline's passes share a link");
  if (std::all_of(phase_ceilings_.begin(), phase_ceilings_.end(), [](const std::string& c) { return c.empty(); }))
    throw std::logic_error("Work::shared_link('" + ceiling + "'): no pass names a bandwidth ceiling to share it");
  if (ceiling.empty()) throw std::logic_error("Work::shared_link: the link's ceiling has no name");
  link_ = ceiling;
  return *this;
}

double Work::pipeline_streams(const Params& p) const {
  if (!chunks_ || !streams_) return 0;
  const double s = streams_->value(p);
  if (!(s >= 1)) throw std::invalid_argument("Work::pipelined: " + streams_->text() + " streams is fewer than one");
  return s;
}

double Work::pipeline_chunks(const Params& p) const {
  if (!chunks_) return 0;
  if (phase_names_.size() < 2) throw std::logic_error("Work::pipelined: a pipeline needs two or more named passes");
  const double c = chunks_->value(p);
  if (!(c >= 1)) throw std::invalid_argument("Work::pipelined: " + chunks_->text() + " chunks is fewer than one");
  return c;
}

std::vector<WorkPhase> Work::phases(const Params& p) const {
  std::vector<WorkPhase> out;
  for (std::size_t i = 0; i < phase_names_.size(); ++i) out.push_back({phase_names_[i], 0, 0, {}, phase_ceilings_[i]});
  if (out.empty()) return out;
  for (const auto& t : terms_) {
    WorkPhase& ph = out[static_cast<std::size_t>(t.phase)];
    if (t.kind == Term::flop) ph.flops += t.count.value(p);
    if (t.kind == Term::transcendental) ph.transcendentals[t.what] += t.count.value(p);
    if (t.kind == Term::read || t.kind == Term::write) ph.bytes += t.count.value(p) * t.bytes_each * t.times.value(p);
  }
  return out;
}

Work& Work::read(const std::string& what, Count count, double bytes_each, Count times) {
  add({Term::read, what, std::move(count), bytes_each, std::move(times)});
  return *this;
}

Work& Work::write(const std::string& what, Count count, double bytes_each, Count times) {
  add({Term::write, what, std::move(count), bytes_each, std::move(times)});
  return *this;
}

Work& Work::flops(Count count, const std::string& what) {
  add({Term::flop, what, std::move(count), 0, 1});
  return *this;
}

Work& Work::transcendentals(const std::string& function, Count count) {
  add({Term::transcendental, function, std::move(count), 0, 1});
  return *this;
}

Work& Work::launches(const std::string& path, Count count) {
  add({Term::launch, path, std::move(count), 0, 1});
  return *this;
}

std::map<std::string, double> Work::launches(const Params& p) const {
  std::map<std::string, double> out;
  for (const auto& t : terms_)
    if (t.kind == Term::launch) out[t.what] += t.count.value(p);
  return out;
}

std::map<std::string, double> Work::transcendentals(const Params& p) const {
  std::map<std::string, double> out;
  for (const auto& t : terms_)
    if (t.kind == Term::transcendental) out[t.what] += t.count.value(p);
  return out;
}

double Work::flops(const Params& p) const {
  double f = 0;
  for (const auto& t : terms_)
    if (t.kind == Term::flop) f += t.count.value(p);
  return f;
}

double Work::bytes(const Params& p) const {
  double b = 0;
  for (const auto& t : terms_)
    if (t.kind == Term::read || t.kind == Term::write) b += t.count.value(p) * t.bytes_each * t.times.value(p);
  return b;
}

double Work::host_bytes(const Params& p) const {
  double b = 0;
  for (const auto& t : terms_)
    if (t.kind == Term::read || t.kind == Term::write) b += t.count.value(p) * t.bytes_each;
  return b;
}

std::string Work::derivation() const {
  // The terms, then their sum: terms over the same factors add up ("44·n B").
  std::string reads, writes, flop_terms, calls, launch_terms;
  std::map<std::vector<std::string>, double> byte_sum, flop_sum;
  for (const auto& t : terms_) {
    if (t.kind == Term::transcendental) {
      calls += (calls.empty() ? "" : " + ") + t.count.text() + " " + t.what;
      continue;
    }
    if (t.kind == Term::launch) {
      launch_terms += (launch_terms.empty() ? "" : " + ") + t.count.text() + " " + t.what;
      continue;
    }
    if (t.kind == Term::flop) {
      flop_terms += (flop_terms.empty() ? "" : ", ") + t.what;
      flop_sum[t.count.factors()] += t.count.coefficient();
      continue;
    }
    const Count total = t.count * t.times;
    std::string term = fmt::format("{} ({} × {} B{})", t.what, t.count.text(), number(t.bytes_each),
                                   t.times.factors().empty() && t.times.coefficient() == 1
                                       ? ""
                                       : fmt::format(", {} times", t.times.text()));
    std::string& list = t.kind == Term::read ? reads : writes;
    list += (list.empty() ? "" : ", ") + term;
    byte_sum[total.factors()] += total.coefficient() * t.bytes_each;
  }
  auto sum_text = [](const std::map<std::vector<std::string>, double>& sums) {
    std::string s;
    for (const auto& [factors, coef] : sums) {
      std::string term = coef == 1 && !factors.empty() ? "" : number(coef);
      for (const auto& f : factors) term += (term.empty() ? "" : "·") + f;
      s += (s.empty() ? "" : " + ") + term;
    }
    return s;
  };
  std::string out;
  if (!reads.empty()) out += "reads " + reads;
  if (!writes.empty()) out += (out.empty() ? "" : "; ") + ("writes " + writes);
  out += byte_sum.empty() ? "no bytes" : ": " + sum_text(byte_sum) + " B";
  out += flop_sum.empty() ? "; no FLOPs counted" : "; " + sum_text(flop_sum) + " FLOPs (" + flop_terms + ")";
  if (!calls.empty()) out += "; math calls: " + calls;
  if (!launch_terms.empty()) out += "; launches: " + launch_terms;
  if (!phase_names_.empty()) {
    out += chunks_ ? fmt::format("; in {} passes, pipelined over C = {} chunks{}{}:", phase_names_.size(),
                                 chunks_->text(), streams_ ? " on S = " + streams_->text() + " streams" : "",
                                 link_.empty() ? "" : ", the copies sharing one link both ways (at " + link_ + ")")
                   : fmt::format("; in {} passes, one after another:", phase_names_.size());
    for (std::size_t i = 0; i < phase_names_.size(); ++i)
      out += (i ? ", " : " ") + phase_names_[i] + (phase_ceilings_[i].empty() ? "" : " (at " + phase_ceilings_[i] + ")");
  }
  return out;
}

}  // namespace roofbench

#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "bench/results.h"
#include "roofline/model.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;
using nlohmann::json;

namespace {
Results full_sample() {
  Results r = sample_results();
  r.benchmarks = {kernel("a", 2e9, 1e9, 0.02), kernel("b", 4e10, 1e9, 0.1)};
  BenchmarkResult failed = kernel("bad", 1, 1, 1);
  failed.measurement.reset();
  failed.verification = {false, 10, 3, 0.5, "every entry", "C[0,0]: got 1, expected 2"};
  failed.error = "verification failed: C[0,0]: got 1, expected 2";
  r.benchmarks.push_back(failed);
  r.ceilings[2].theoretical = ReferenceValue{1.1e12, "2 cores x ..."};
  r.ceilings[0].measurement_end = measurement_of({1.1, 1.2});
  r.ceilings[0].value_end = 90e9;
  apply_model(r);
  return r;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = roofbench::testing::scratch_path(name);
  std::ofstream(path) << text;
  return path.string();
}
}  // namespace

TEST(ResultsJson, RoundTripKeepsEverything) {
  const Results r = full_sample();
  const Results back = json::parse(dump_results(r)).get<Results>();
  EXPECT_EQ(dump_results(back), dump_results(r));
  ASSERT_EQ(back.benchmarks.size(), 3u);
  EXPECT_EQ(back.benchmarks[0].params, r.benchmarks[0].params);
  EXPECT_EQ(back.benchmarks[0].measurement->samples_s, r.benchmarks[0].measurement->samples_s);
  EXPECT_DOUBLE_EQ(back.benchmarks[0].placement->roof_pct, 50.0);
  EXPECT_FALSE(back.benchmarks[2].verified());
  EXPECT_FALSE(back.benchmarks[2].measurement);
  EXPECT_DOUBLE_EQ(back.ceilings[2].theoretical->value, 1.1e12);
  EXPECT_EQ(back.ceilings[3].precision, Precision::fp64);
  ASSERT_TRUE(back.ceilings[0].measurement_end);
  EXPECT_EQ(back.ceilings[0].measurement_end->samples_s, (std::vector<double>{1.1, 1.2}));
  EXPECT_DOUBLE_EQ(*back.ceilings[0].value_end, 90e9);
  EXPECT_FALSE(back.ceilings[1].value_end);
}

TEST(ResultsJson, HostStepTimesRoundTripAndAreChecked) {
  Results r = full_sample();
  r.benchmarks[0].host_s = {{"make", 0.01}, {"prepare", 0.5}, {"verify", 1.25}, {"sample", 2.0}};
  const Results back = json::parse(dump_results(r)).get<Results>();
  EXPECT_EQ(back.benchmarks[0].host_s, r.benchmarks[0].host_s);
  EXPECT_TRUE(back.benchmarks[1].host_s.empty());  // none recorded: null, and empty again
  json j = json::parse(dump_results(r));
  for (const json& bad : {json{{"verify", -1.0}}, json{{"coffee", 1.0}}, json{{"sample", "1 s"}}, json(3.0)}) {
    j["benchmarks"][0]["host_s"] = bad;
    EXPECT_THROW(j.get<Results>(), InputError) << bad.dump();
  }
}

TEST(ResultsJson, SamplingPartsRoundTripAndAreChecked) {
  Results r = full_sample();
  r.benchmarks[0].measurement->sampling_s = {{"runs", 0.5}, {"flush", 0.25}, {"readings", 0.125}};
  const Results back = json::parse(dump_results(r)).get<Results>();
  EXPECT_EQ(back.benchmarks[0].measurement->sampling_s, r.benchmarks[0].measurement->sampling_s);
  EXPECT_TRUE(back.benchmarks[1].measurement->sampling_s.empty());  // none recorded: absent, and empty again
  json j = json::parse(dump_results(r));
  EXPECT_FALSE(j["benchmarks"][1]["measurement"].contains("sampling_s"));
  for (const json& bad : {json{{"runs", -1.0}}, json{{"coffee", 1.0}}, json{{"flush", "1 s"}}, json(3.0)}) {
    j["benchmarks"][0]["measurement"]["sampling_s"] = bad;
    EXPECT_THROW(j.get<Results>(), InputError) << bad.dump();
  }
}

TEST(ResultsJson, MathPrecisionAndWavesRoundTrip) {
  Results r = full_sample();
  BenchmarkResult& b = r.benchmarks[0];
  b.params = {{"M", 1536}, {"N", 1536}, {"K", 64}};
  b.math = Precision::fp32;
  b.waves = wave_model(128, 128, 1536, 1536, 1, 132);
  const json j = json::parse(dump_results(r));
  EXPECT_EQ(j.at("benchmarks").at(0).at("math_precision"), "fp32");
  EXPECT_EQ(j.at("benchmarks").at(0).at("waves").at("tiles"), 144);
  EXPECT_TRUE(j.at("benchmarks").at(1).at("math_precision").is_null());
  EXPECT_TRUE(j.at("benchmarks").at(1).at("waves").is_null());
  Results back = j.get<Results>();
  EXPECT_EQ(back.benchmarks[0].math, Precision::fp32);
  ASSERT_TRUE(back.benchmarks[0].waves);
  EXPECT_EQ(back.benchmarks[0].waves->efficiency, 0);  // the file's facts only: the model derives the rest
  apply_model(back);
  EXPECT_EQ(back.benchmarks[0].waves->tiles, 144);
  EXPECT_DOUBLE_EQ(back.benchmarks[0].waves->efficiency, 144.0 / 264);
  EXPECT_FALSE(back.benchmarks[1].math);
  // Derived fields are recomputed: an edited efficiency does not survive a load.
  json edited = j;
  edited["benchmarks"][0]["waves"]["efficiency"] = 0.99;
  Results reread = edited.get<Results>();
  apply_model(reread);
  EXPECT_DOUBLE_EQ(reread.benchmarks[0].waves->efficiency, 144.0 / 264);
  edited["benchmarks"][0]["waves"]["sms"] = 0;
  EXPECT_THROW(edited.get<Results>(), InputError);
}

TEST(ResultsJson, ComparedWithAndPerSampleClocksRoundTrip) {
  Results r = full_sample();
  r.benchmarks[0].compared_with = "fusion/sincos_unfused/fp32";
  Measurement& m = *r.benchmarks[0].measurement;
  m.sample_clock_hz.assign(m.samples_s.size(), 1.9e9);
  m.sample_clock_hz[0] = 1.2e9;
  m.clock_reference_hz = 1.9e9;
  m.throttled = {0};
  m.clock_limits = {"sw_power_cap"};
  const json j = json::parse(dump_results(r));
  EXPECT_EQ(j.at("benchmarks").at(0).at("compared_with"), "fusion/sincos_unfused/fp32");
  EXPECT_TRUE(j.at("benchmarks").at(1).at("compared_with").is_null());
  const Results back = j.get<Results>();
  EXPECT_EQ(back.benchmarks[0].compared_with, "fusion/sincos_unfused/fp32");
  const Measurement& b = *back.benchmarks[0].measurement;
  EXPECT_EQ(b.sample_clock_hz, m.sample_clock_hz);
  EXPECT_EQ(b.throttled, std::vector<int>{0});
  EXPECT_EQ(b.clock_limits, std::vector<std::string>{"sw_power_cap"});
  ASSERT_TRUE(b.clock_reference_hz);
  // A clock series that does not match the samples, or a throttled index past them, is refused.
  json bad = j;
  bad["benchmarks"][0]["measurement"]["sample_clock_hz"].push_back(1.0);
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["benchmarks"][0]["measurement"]["throttled_samples"] = {99};
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, PlacementsRoundTripAndMustAddUpToTheSamples) {
  Results r = full_sample();
  Measurement& m = *r.benchmarks[0].measurement;
  ASSERT_GE(m.samples_s.size(), 2u);
  m.placement_samples = {1, static_cast<int>(m.samples_s.size()) - 1};
  const json j = json::parse(dump_results(r));
  EXPECT_EQ(j.at("benchmarks").at(0).at("measurement").at("placement_samples"), json(m.placement_samples));
  EXPECT_FALSE(j.at("benchmarks").at(1).at("measurement").contains("placement_samples"));  // one instance: absent
  EXPECT_EQ(j.get<Results>().benchmarks[0].measurement->placement_samples, m.placement_samples);
  json bad = j;
  bad["benchmarks"][0]["measurement"]["placement_samples"] = {1, 1000};
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad["benchmarks"][0]["measurement"]["placement_samples"] = {0, static_cast<int>(m.samples_s.size())};
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, CountersRoundTripAndTheirDerivedValuesAreRecomputed) {
  Results r = full_sample();
  r.counters = {{"requested", true}, {"available", true}, {"chip", "GH100"}};
  r.benchmarks[0].counters = roofbench::testing::counters_of(2e9, 1e9, 4e9, 8e9);
  Counters failed;
  failed.set = "default";
  failed.metrics = {"dram__bytes_read.sum"};
  failed.error = "no permission to read GPU performance counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES from x)";
  r.benchmarks[1].counters = failed;
  json j = json::parse(dump_results(r));
  const json& c = j.at("benchmarks").at(0).at("counters");
  EXPECT_EQ(c.at("passes"), 2);
  EXPECT_DOUBLE_EQ(c.at("derived").at("bytes").at("l2").get<double>(), 4e9);
  EXPECT_DOUBLE_EQ(c.at("derived").at("intensity").at("dram").get<double>(), 2.0);
  EXPECT_EQ(j.at("counters").at("chip"), "GH100");
  // A derived value edited in the file is not believed: the model derives it from the raw values.
  j["benchmarks"][0]["counters"]["derived"]["flops"] = 1.0;
  Results back = j.get<Results>();
  ASSERT_TRUE(back.benchmarks[0].counters);
  EXPECT_FALSE(back.benchmarks[0].counters->flops);
  apply_model(back);
  EXPECT_DOUBLE_EQ(*back.benchmarks[0].counters->flops, 2e9);
  EXPECT_EQ(back.benchmarks[0].counters->values, r.benchmarks[0].counters->values);
  EXPECT_EQ(back.benchmarks[1].counters->error, failed.error);
  EXPECT_FALSE(back.benchmarks[1].counters->ok());
  EXPECT_EQ(back.counters.at("chip"), "GH100");
  // Files without counters load with none.
  json old = json::parse(dump_results(full_sample()));
  old.erase("counters");
  old["benchmarks"][0].erase("counters");
  EXPECT_FALSE(old.get<Results>().benchmarks[0].counters);
  // A value that is not a number is refused.
  json bad = j;
  bad["benchmarks"][0]["counters"]["values"]["dram__bytes_read.sum"] = "lots";
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, TheKernelTraceRoundTripsAndBadSpansAreRefused) {
  Results r = full_sample();
  Counters c = roofbench::testing::counters_of(2e9, 1e9, 4e9, 8e9);
  c.trace = KernelTrace{{1e-5, 1.1e-5}, {0.9e-5, 1e-5}, {"ns::sin_kernel", "ns::cos_kernel"}, ""};
  r.benchmarks[0].counters = c;
  Counters untraced = c;
  untraced.trace = KernelTrace{};
  untraced.trace->error = "kernel trace failed: CUPTI delivered no kernel record for the run";
  r.benchmarks[1].counters = untraced;
  const json j = json::parse(dump_results(r));
  EXPECT_EQ(j.at("benchmarks").at(0).at("counters").at("trace").at("kernels").size(), 2u);
  const Results back = j.get<Results>();
  ASSERT_TRUE(back.benchmarks[0].counters->trace);
  EXPECT_EQ(back.benchmarks[0].counters->trace->span_s, (std::vector<double>{1e-5, 1.1e-5}));
  EXPECT_EQ(back.benchmarks[0].counters->trace->kernels, c.trace->kernels);
  EXPECT_TRUE(back.benchmarks[0].counters->trace->ok());
  EXPECT_FALSE(back.benchmarks[1].counters->trace->ok());
  EXPECT_EQ(back.benchmarks[1].counters->trace->error, untraced.trace->error);
  EXPECT_FALSE(json::parse(dump_results(full_sample())).at("benchmarks").at(0).contains("trace"));
  json bad = j;
  bad["benchmarks"][0]["counters"]["trace"]["span_s"][0] = -1.0;
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["benchmarks"][0]["counters"]["trace"]["busy_s"] = json::array();
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, ATracesCopiesStreamsAndOverlapRoundTrip) {
  Results r = full_sample();
  Counters c = roofbench::testing::counters_of(2e9, 1e9, 4e9, 8e9);
  c.trace = KernelTrace{{5e-3, 5.1e-3}, {4.9e-3, 5e-3}, {"fma_chain", "fma_chain"}, ""};
  c.trace->overlap_s = {3e-3, 3.2e-3};
  c.trace->copies = 4;
  c.trace->streams = 2;
  r.benchmarks[0].counters = c;
  const json j = json::parse(dump_results(r));
  const Results back = j.get<Results>();
  const KernelTrace& t = *back.benchmarks[0].counters->trace;
  EXPECT_EQ(t.overlap_s, c.trace->overlap_s);
  EXPECT_EQ(t.copies, 4u);
  EXPECT_EQ(t.streams, 2u);
  json old = j;  // a file from before copies were traced
  for (const char* k : {"overlap_s", "copies", "streams"}) old["benchmarks"][0]["counters"]["trace"].erase(k);
  const Results older = old.get<Results>();
  EXPECT_TRUE(older.benchmarks[0].counters->trace->overlap_s.empty());
  EXPECT_EQ(older.benchmarks[0].counters->trace->streams, 0u);
  json bad = j;
  bad["benchmarks"][0]["counters"]["trace"]["overlap_s"] = {1e-3};  // one run of two
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["benchmarks"][0]["counters"]["trace"]["overlap_s"][1] = -1.0;
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, BenchmarksLeftOutOfTheRunRoundTripAndAreAbsentWhenNone) {
  Results r = full_sample();
  EXPECT_FALSE(json::parse(dump_results(r)).contains("not_run"));
  r.not_run = {{"gemm/wgmma/bf16", "built for sm_90a only; this GPU is sm_80"}};
  const json j = json::parse(dump_results(r));
  ASSERT_EQ(j.at("not_run").size(), 1u);
  EXPECT_EQ(j.at("not_run")[0].at("benchmark"), "gemm/wgmma/bf16");
  const Results back = j.get<Results>();
  ASSERT_EQ(back.not_run.size(), 1u);
  EXPECT_EQ(back.not_run[0].why, "built for sm_90a only; this GPU is sm_80");
  json bad = j;
  bad["not_run"][0].erase("why");
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, HasTheDocumentedTopLevelFields) {
  const json j = json::parse(dump_results(full_sample()));
  EXPECT_EQ(j.at("schema"), kResultsSchema);
  for (const char* key : {"provenance", "device", "settings", "ceilings", "ridge_points", "benchmarks"})
    EXPECT_TRUE(j.contains(key)) << key;
  const json& b = j.at("benchmarks").at(0);
  for (const char* key : {"name", "family", "variant", "precision", "params", "flops", "bytes", "work", "verified",
                          "measurement", "placement", "median_s", "iqr_s"})
    EXPECT_TRUE(b.contains(key)) << key;
  for (const char* key : {"intensity", "attainable_flop_per_s", "roof_pct", "bound", "flop_per_s", "bytes_per_s"})
    EXPECT_TRUE(b.at("placement").contains(key)) << key;
  const json& c = j.at("ceilings").at(0);
  for (const char* key : {"name", "kind", "level", "value", "value_unit", "method", "datasheet"})
    EXPECT_TRUE(c.contains(key)) << key;
}

TEST(ResultsJson, AbsentValuesAreNullNeverOmitted) {
  const Results r = full_sample();
  ASSERT_FALSE(r.benchmarks.at(2).measurement);  // the failed one
  const json j = json::parse(dump_results(r));
  const json& failed = j.at("benchmarks").at(2);
  for (const char* key : {"measurement", "placement", "median_s", "iqr_s"}) {
    ASSERT_TRUE(failed.contains(key)) << key;
    EXPECT_TRUE(failed.at(key).is_null()) << key;
  }
  EXPECT_DOUBLE_EQ(j.at("benchmarks").at(0).at("median_s").get<double>(), r.benchmarks.at(0).measurement->stats.median);
}

TEST(ResultsJson, WorkAndRatesThatAreNotFiniteAreRefused) {
  // A rate that overflows would hang the chart's decade loop or print NaN verdicts downstream.
  const auto refused = [](const std::function<void(json&)>& edit, const std::string& says) {
    json j = json::parse(dump_results(full_sample()));
    edit(j);
    try {
      j.get<Results>();
      ADD_FAILURE() << "accepted: " << says;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused([](json& j) { j["benchmarks"][0]["flops"] = 1e308; }, "not a finite rate");
  refused([](json& j) { j["benchmarks"][0]["measurement"]["samples_s"][0] = 1e-310; }, "not a finite rate");
  refused([](json& j) { j["benchmarks"][0]["flops"] = -1.0; }, "finite numbers >= 0");
  refused([](json& j) { j["benchmarks"][1]["bytes"] = -5.0; }, "finite numbers >= 0");
  refused([](json& j) { j["ceilings"][0]["value"] = -1e9; }, "finite numbers >= 0");
  refused([](json& j) { j["ceilings"][0]["value_end"] = -1.0; }, "finite numbers >= 0");
  refused([](json& j) { j["benchmarks"][0]["measurement"]["samples_s"][0] = 0.0; }, "not a positive time");
  refused([](json& j) { j["benchmarks"][0]["measurement"]["samples_s"][0] = -1e-3; }, "not a positive time");
  refused([](json& j) { j["benchmarks"].push_back(j["benchmarks"][0]); }, "is listed twice");
  refused([](json& j) { j["ceilings"].push_back(j["ceilings"][1]); }, "is listed twice");
  // The failed benchmark has no measurement: a huge declared work alone is not a rate.
  json ok = json::parse(dump_results(full_sample()));
  ok["benchmarks"][2]["flops"] = 1e308;
  EXPECT_NO_THROW(ok.get<Results>());
}

TEST(ResultsJson, StatisticsAreRecomputedFromSamplesOnLoad) {
  json j = json::parse(dump_results(full_sample()));
  j["benchmarks"][0]["measurement"]["stats"]["median_s"] = 123.0;  // a hand edit is not believed
  const Results back = j.get<Results>();
  EXPECT_DOUBLE_EQ(back.benchmarks[0].measurement->stats.median, 0.02);
}

TEST(ResultsJson, WrongSchemaIsRejected) {
  json j = json::parse(dump_results(full_sample()));
  j["schema"] = "roofbench.results.v0";
  try {
    j.get<Results>();
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported schema 'roofbench.results.v0'"), std::string::npos);
  }
  j.erase("schema");
  EXPECT_THROW(j.get<Results>(), InputError);
}

TEST(ResultsJson, MissingOrMistypedFieldsAreOneLineErrors) {
  json j = json::parse(dump_results(full_sample()));
  j["benchmarks"][0].erase("flops");
  try {
    j.get<Results>();
    FAIL() << "no exception";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("flops"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  json k = json::parse(dump_results(full_sample()));
  k["ceilings"][0]["value"] = "fast";
  EXPECT_THROW(k.get<Results>(), InputError);
}

TEST(ResultsJson, AFailedBenchmarkMayNotCarryNumbers) {
  json j = json::parse(dump_results(full_sample()));
  j["benchmarks"][2]["measurement"] = j["benchmarks"][0]["measurement"];
  EXPECT_THROW(j.get<Results>(), InputError);
}

TEST(ResultsJson, ATimingOnlyBenchmarkKeepsItsNumbersAndMayNotClaimVerification) {
  Results r = full_sample();
  BenchmarkResult& t = r.benchmarks[1];
  t.timing_only = true;
  t.verification = {};
  t.verification.method = "none: declared timing only, with no reference";
  const json j = json::parse(dump_results(r));
  EXPECT_EQ(j["benchmarks"][1]["timing_only"], true);
  EXPECT_EQ(j["benchmarks"][0]["timing_only"], false);
  const Results back = j.get<Results>();
  EXPECT_TRUE(back.benchmarks[1].timing_only);
  EXPECT_TRUE(back.benchmarks[1].measured());
  EXPECT_FALSE(back.benchmarks[1].verified());
  ASSERT_TRUE(back.benchmarks[1].measurement);
  json lie = j;
  lie["benchmarks"][1]["verification"]["ok"] = true;
  EXPECT_THROW(lie.get<Results>(), InputError);
  json bare = j;
  bare["benchmarks"][1]["measurement"] = nullptr;
  EXPECT_THROW(bare.get<Results>(), InputError);
}

TEST(ResultsJson, LoadResultsNamesTheFileInEveryError) {
  EXPECT_THROW(load_results("/nonexistent/results.json"), InputError);
  const std::string bad = write_temp("roofbench_bad.json", "{\"schema\": ");
  try {
    load_results(bad);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
  const std::string other = write_temp("roofbench_other.json", "[1, 2, 3]");
  EXPECT_THROW(load_results(other), InputError);
  const std::string good = write_temp("roofbench_good.json", dump_results(full_sample()));
  EXPECT_EQ(load_results(good).benchmarks.size(), 3u);
}

TEST(ResultsJson, TheVendorReferenceIsAFlagAndOldFilesKeepTheirReference) {
  Results r = full_sample();
  r.benchmarks[0].vendor_reference = true;
  json j = json::parse(dump_results(r));
  EXPECT_EQ(j["benchmarks"][0].at("vendor_reference"), true);
  EXPECT_TRUE(j.get<Results>().benchmarks[0].vendor_reference);
  // A file from before the flag: its vendor libraries were the GEMMs named cublas and openblas.
  json old = j;
  for (auto& b : old["benchmarks"]) b.erase("vendor_reference");
  old["benchmarks"][0]["family"] = "gemm";
  old["benchmarks"][0]["variant"] = "openblas";
  const Results back = old.get<Results>();
  EXPECT_TRUE(back.benchmarks[0].vendor_reference);
  EXPECT_FALSE(back.benchmarks[1].vendor_reference);
}

TEST(ResultsJson, UnitsLevelsAndCeilingKindsAreReadByTheirNames) {
  json j = json::parse(dump_results(full_sample()));
  EXPECT_EQ(j["benchmarks"][0].at("unit"), "simd");
  EXPECT_EQ(j["benchmarks"][0].at("level"), "dram");
  EXPECT_EQ(j["ceilings"][0].at("kind"), "bandwidth");
  json bad = j;
  bad["benchmarks"][0]["unit"] = "gpu";
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["ceilings"][0]["level"] = "hbm";
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["ceilings"][0]["kind"] = "latency";
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, MathCallsAndTranscendentalCeilingsRoundTripAndBadOnesAreRefused) {
  Results r = full_sample();
  r.ceilings.push_back(transcendental_ceiling("sin", 2e9));
  r.benchmarks[0].transcendentals = {{"sin", 1e9}};
  apply_model(r);
  const json j = json::parse(dump_results(r));
  EXPECT_EQ(j["benchmarks"][0]["transcendentals"]["sin"], 1e9);
  EXPECT_TRUE(j["benchmarks"][1]["transcendentals"].empty());
  EXPECT_EQ(j["ceilings"].back()["kind"], "transcendental");
  EXPECT_EQ(j["ceilings"].back()["function"], "sin");
  EXPECT_TRUE(j["ceilings"][0]["function"].is_null());
  EXPECT_EQ(j["benchmarks"][0]["placement"]["transcendental_ceiling"], "math_sin");
  Results back = j.get<Results>();
  apply_model(back);
  EXPECT_EQ(back.benchmarks[0].transcendentals, r.benchmarks[0].transcendentals);
  EXPECT_EQ(back.ceilings.back().function, "sin");
  ASSERT_TRUE(back.benchmarks[0].placement);
  EXPECT_DOUBLE_EQ(back.benchmarks[0].placement->model_time_s, r.benchmarks[0].placement->model_time_s);
  // Files from before the third roof have neither field and still load.
  json old = j;
  old["benchmarks"][0].erase("transcendentals");
  old["benchmarks"][0]["placement"].erase("model_time_s");
  old["ceilings"].erase(old["ceilings"].size() - 1);
  for (auto& c : old["ceilings"]) c.erase("function");
  EXPECT_NO_THROW(old.get<Results>());
  for (const json& v : {json(-1.0), json("many"), json(nullptr)}) {
    json bad = j;
    bad["benchmarks"][0]["transcendentals"]["sin"] = v;
    EXPECT_THROW(bad.get<Results>(), InputError) << v;
  }
  for (const std::string& name : std::vector<std::string>{"", "Sin", "sin<script>", std::string(33, 's')}) {
    json bad = j;
    bad["benchmarks"][0]["transcendentals"] = {{name, 1.0}};
    EXPECT_THROW(bad.get<Results>(), InputError) << name;
    bad = j;
    bad["ceilings"].back()["function"] = name;
    EXPECT_THROW(bad.get<Results>(), InputError) << name;
  }
  json bad = j;
  bad["benchmarks"][0]["transcendentals"] = json::array({1, 2});
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["ceilings"].back()["function"] = nullptr;
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, LaunchesAndLaunchCeilingsRoundTripAndBadOnesAreRefused) {
  Results r = full_sample();
  r.ceilings.push_back(launch_ceiling("omp_region", 1e6));
  r.benchmarks[0].launches = {{"omp_region", 1e6}};  // 1 s of launches: they bind
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement);
  EXPECT_EQ(r.benchmarks[0].placement->bound, "launch");
  const json j = json::parse(dump_results(r));
  EXPECT_EQ(j["benchmarks"][0]["launches"]["omp_region"], 1e6);
  EXPECT_TRUE(j["benchmarks"][1]["launches"].empty());
  EXPECT_EQ(j["ceilings"].back()["kind"], "launch");
  EXPECT_EQ(j["ceilings"].back()["function"], "omp_region");
  EXPECT_EQ(j["benchmarks"][0]["placement"]["launch_ceiling"], "launch_omp_region");
  EXPECT_DOUBLE_EQ(j["benchmarks"][0]["placement"]["launch_time_s"].get<double>(), 1.0);
  EXPECT_TRUE(j["benchmarks"][1]["placement"]["launch_ceiling"].is_null());
  Results back = j.get<Results>();
  apply_model(back);
  EXPECT_EQ(back.benchmarks[0].launches, r.benchmarks[0].launches);
  EXPECT_EQ(back.benchmarks[0].placement->bound, "launch");
  EXPECT_EQ(back.benchmarks[0].placement->launch_ceiling, "launch_omp_region");
  // Files from before the launch roof have no launches and still load.
  json old = j;
  for (auto& b : old["benchmarks"]) {
    b.erase("launches");
    if (!b["placement"].is_null()) b["placement"].erase("launch_ceiling"), b["placement"].erase("launch_time_s");
  }
  old["ceilings"].erase(old["ceilings"].size() - 1);
  EXPECT_NO_THROW(old.get<Results>());
  for (const json& v : {json(-1.0), json("many"), json(nullptr)}) {
    json bad = j;
    bad["benchmarks"][0]["launches"]["omp_region"] = v;
    EXPECT_THROW(bad.get<Results>(), InputError) << v;
  }
  for (const std::string& name : std::vector<std::string>{"", "Kernel", "k<b>", std::string(33, 'k')}) {
    json bad = j;
    bad["benchmarks"][0]["launches"] = {{name, 1.0}};
    EXPECT_THROW(bad.get<Results>(), InputError) << name;
    bad = j;
    bad["ceilings"].back()["function"] = name;
    EXPECT_THROW(bad.get<Results>(), InputError) << name;
  }
  json bad = j;
  bad["ceilings"].back()["function"] = nullptr;  // a launch ceiling names its path
  try {
    (void)bad.get<Results>();
    ADD_FAILURE() << "a launch ceiling without a path loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("launch ceiling 'launch_omp_region' has no launch path"), std::string::npos)
        << e.what();
  }
}

TEST(ResultsJson, PassesRoundTripAndMustAddUpToTheTotals) {
  Results r = full_sample();
  r.ceilings.push_back(transcendental_ceiling("sin", 2e9));
  BenchmarkResult& b = r.benchmarks[0];  // 2e9 FLOPs, 1e9 bytes
  b.transcendentals = {{"sin", 1e8}};
  b.phases = {{"s = sin x", 1e9, 4e8, {{"sin", 1e8}}}, {"y = s·s", 1e9, 6e8, {}}};
  apply_model(r);
  const json j = json::parse(dump_results(r));
  ASSERT_EQ(j["benchmarks"][0]["phases"].size(), 2u);
  EXPECT_EQ(j["benchmarks"][0]["phases"][0]["name"], "s = sin x");
  EXPECT_TRUE(j["benchmarks"][1]["phases"].empty());
  Results back = j.get<Results>();
  ASSERT_EQ(back.benchmarks[0].phases.size(), 2u);
  EXPECT_DOUBLE_EQ(back.benchmarks[0].phases[1].bytes, 6e8);
  EXPECT_EQ(back.benchmarks[0].phases[0].transcendentals, b.phases[0].transcendentals);
  json bad = j;
  bad["benchmarks"][0]["phases"][1]["bytes"] = 7e8;  // 1.1e9 in all, against 1e9 declared
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["benchmarks"][0]["phases"][1]["transcendentals"] = {{"exp", 1.0}};
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["benchmarks"][0]["phases"][0]["flops"] = -1.0;
  EXPECT_THROW(bad.get<Results>(), InputError);
  bad = j;
  bad["benchmarks"][0]["phases"] = "two";
  EXPECT_THROW(bad.get<Results>(), InputError);
}

TEST(ResultsJson, APipelineAndItsPassesCeilingsRoundTrip) {
  Results r = full_sample();
  BenchmarkResult& b = r.benchmarks[0];  // 2e9 FLOPs, 1e9 bytes
  b.phases = {{"H2D", 0, 3e8, {}, "dram_copy"}, {"kernel", 2e9, 4e8, {}, ""}, {"D2H", 0, 3e8, {}, "dram_copy"}};
  b.pipeline_chunks = 8;
  b.pipeline_streams = 2;
  apply_model(r);
  const json j = json::parse(dump_results(r));
  EXPECT_EQ(j["benchmarks"][0]["pipeline_chunks"], 8.0);
  EXPECT_EQ(j["benchmarks"][0]["phases"][0]["ceiling"], "dram_copy");
  EXPECT_FALSE(j["benchmarks"][0]["phases"][1].contains("ceiling"));
  EXPECT_TRUE(j["benchmarks"][1]["pipeline_chunks"].is_null());
  const Results back = j.get<Results>();
  EXPECT_DOUBLE_EQ(back.benchmarks[0].pipeline_chunks, 8);
  EXPECT_DOUBLE_EQ(back.benchmarks[0].pipeline_streams, 2);
  EXPECT_EQ(back.benchmarks[0].phases[2].ceiling, "dram_copy");
  EXPECT_EQ(back.benchmarks[0].phases[1].ceiling, "");
  ASSERT_TRUE(back.benchmarks[0].placement);
  EXPECT_DOUBLE_EQ(back.benchmarks[0].placement->model_time_s, r.benchmarks[0].placement->model_time_s);
  for (const json& v : {json(0.5), json("eight"), json(-3)}) {
    json bad = j;
    bad["benchmarks"][0]["pipeline_chunks"] = v;
    EXPECT_THROW(bad.get<Results>(), InputError) << v;
  }
  json no_pipe = j;  // streams without a pipeline
  no_pipe["benchmarks"][0]["pipeline_chunks"] = nullptr;
  EXPECT_THROW(no_pipe.get<Results>(), InputError);
  json bad = j;
  bad["benchmarks"][0]["phases"][0]["ceiling"] = "<script>";
  EXPECT_THROW(bad.get<Results>(), InputError);
  // The link the copies share (Work::shared_link): a ceiling's name, on a pipeline with copies.
  EXPECT_TRUE(j["benchmarks"][0]["pipeline_link"].is_null());
  json linked = j;
  linked["benchmarks"][0]["pipeline_link"] = "dram_copy";
  EXPECT_EQ(linked.get<Results>().benchmarks[0].pipeline_link, "dram_copy");
  EXPECT_EQ(json::parse(dump_results(linked.get<Results>()))["benchmarks"][0]["pipeline_link"], "dram_copy");
  for (const json& v : {json("<script>"), json(""), json(3)}) {
    json bad_link = linked;
    bad_link["benchmarks"][0]["pipeline_link"] = v;
    EXPECT_THROW(bad_link.get<Results>(), InputError) << v;
  }
  json no_copies = linked;  // a link, but no pass names a ceiling to share it
  for (auto& ph : no_copies["benchmarks"][0]["phases"]) ph.erase("ceiling");
  EXPECT_THROW(no_copies.get<Results>(), InputError);
  // A ceiling used by name only (a link both ways) says so, and keeps saying so; absent: a roof.
  Results with_link = r;
  with_link.ceilings.front().level_roof = false;
  const json lj = json::parse(dump_results(with_link));
  EXPECT_EQ(lj["ceilings"][0]["level_roof"], false);
  EXPECT_EQ(lj["ceilings"][1]["level_roof"], true);
  EXPECT_FALSE(lj.get<Results>().ceilings.front().level_roof);
  json old = lj;
  old["ceilings"][0].erase("level_roof");
  EXPECT_TRUE(old.get<Results>().ceilings.front().level_roof);
  json bad_roof = lj;
  bad_roof["ceilings"][0]["level_roof"] = "no";
  EXPECT_THROW(bad_roof.get<Results>(), InputError);
  // A vendor routine's ceiling names the suite's own it is the reference for; absent: none.
  EXPECT_TRUE(lj["ceilings"][0]["reference_for"].is_null());
  EXPECT_FALSE(old.get<Results>().ceilings.front().reference_for.has_value());
  Results with_vendor = r;
  with_vendor.ceilings.front().reference_for = "dram_copy";
  const json vj = json::parse(dump_results(with_vendor));
  EXPECT_EQ(vj["ceilings"][0]["reference_for"], "dram_copy");
  EXPECT_EQ(vj.get<Results>().ceilings.front().reference_for, std::optional<std::string>("dram_copy"));
  for (const json& v : {json("DRAM copy"), json(""), json(3), vj["ceilings"][0]["name"]}) {  // the last: itself
    json bad_vendor = vj;
    bad_vendor["ceilings"][0]["reference_for"] = v;
    EXPECT_THROW(bad_vendor.get<Results>(), InputError) << v;
  }
  json unpiped = linked;  // a link without a pipeline
  unpiped["benchmarks"][0]["pipeline_chunks"] = nullptr;
  unpiped["benchmarks"][0]["pipeline_streams"] = nullptr;
  EXPECT_THROW(unpiped.get<Results>(), InputError);
}

TEST(ResultsJson, ASustainedPassAndTheClockOfThePlacementRoundTripAndAreChecked) {
  Results r = full_sample();
  Ceiling& fma = r.ceilings[2];
  fma.measurement.sample_clock_hz = {1.98e9};
  Measurement held = measurement_of({1.25, 1.26});
  held.held_s = 10.5;
  held.sample_clock_hz = {1.6e9, 1.6e9};
  held.sample_power_w = {650, 655};
  fma.measurement_sustained = held;
  fma.value_sustained = 0.8e12;
  r.benchmarks[1].measurement->sample_clock_hz = {1.6e9, 1.6e9, 1.6e9};
  apply_model(r);
  ASSERT_EQ(r.benchmarks[1].placement->roof_clock, "sustained");
  const Results back = json::parse(dump_results(r)).get<Results>();
  EXPECT_EQ(dump_results(back), dump_results(r));
  ASSERT_TRUE(back.ceilings[2].measurement_sustained);
  EXPECT_DOUBLE_EQ(back.ceilings[2].measurement_sustained->held_s, 10.5);
  EXPECT_DOUBLE_EQ(*back.ceilings[2].value_sustained, 0.8e12);
  EXPECT_EQ(back.benchmarks[1].placement->roof_clock, "sustained");
  EXPECT_EQ(back.benchmarks[0].placement->roof_clock, "");
  EXPECT_EQ(back.benchmarks[0].placement->work, "declared");
  // One without the other, a negative hold, a negative rate: refused.
  json j = json::parse(dump_results(r));
  for (auto plant : std::vector<std::function<void(json&)>>{
           [](json& c) { c["measurement_sustained"] = nullptr; },
           [](json& c) { c["value_sustained"] = nullptr; },
           [](json& c) { c["measurement_sustained"]["held_s"] = -1; },
           [](json& c) { c["value_sustained"] = -5; }}) {
    json bad = j;
    plant(bad["ceilings"][2]);
    EXPECT_THROW(bad.get<Results>(), InputError) << bad["ceilings"][2].dump().substr(0, 200);
  }
}

// A pass measured once more in brief samples: its rate, samples and benchmark (another size of the
// ceiling's own) go together, and the model says why it is the roof.
TEST(ResultsJson, ABriefPassRoundTripsAndIsChecked) {
  Results r = full_sample();
  Ceiling& fma = r.ceilings[2];
  fma.benchmark = "ceiling/fp32_fma/fp32/threads:2/iters:4096";
  fma.measurement_brief = measurement_of({0.01, 0.011});
  fma.value_brief = 3 * fma.value;
  fma.value = *fma.value_brief;
  fma.benchmark_brief = "ceiling/fp32_fma/fp32/threads:2/iters:64";
  apply_model(r);
  const Results back = json::parse(dump_results(r)).get<Results>();
  EXPECT_EQ(dump_results(back), dump_results(r));
  ASSERT_TRUE(back.ceilings[2].measurement_brief && back.ceilings[2].value_brief && back.ceilings[2].benchmark_brief);
  EXPECT_EQ(*back.ceilings[2].benchmark_brief, "ceiling/fp32_fma/fp32/threads:2/iters:64");
  EXPECT_DOUBLE_EQ(*back.ceilings[2].value_brief, 3 * r.ceilings[2].value_start);
  EXPECT_EQ(&back.ceilings[2].roof_pass(), &*back.ceilings[2].measurement_brief);
  bool said = false;
  for (const auto& w : back.ceilings[2].warnings) said |= w.find("in samples as brief as") != std::string::npos;
  EXPECT_TRUE(said) << "the model says why the brief pass is the roof";
  EXPECT_FALSE(back.ceilings[0].benchmark_brief);
  json j = json::parse(dump_results(r));
  EXPECT_TRUE(j["ceilings"][0].contains("benchmark_brief") && j["ceilings"][0]["benchmark_brief"].is_null());
  for (auto plant : std::vector<std::function<void(json&)>>{
           [](json& c) { c["measurement_brief"] = nullptr; },
           [](json& c) { c["value_brief"] = nullptr; },
           [](json& c) { c["benchmark_brief"] = nullptr; },
           [](json& c) { c["value_brief"] = -1; },
           [](json& c) { c["benchmark_brief"] = 7; },
           [](json& c) { c["benchmark_brief"] = ""; },
           [](json& c) { c["benchmark_brief"] = c["benchmark"]; },  // its own size: no brief pass
           [](json& c) { c["benchmark_brief"] = "gemm/naive/fp32/M:64"; }}) {  // another benchmark's
    json bad = j;
    plant(bad["ceilings"][2]);
    EXPECT_THROW(bad.get<Results>(), InputError) << bad["ceilings"][2].dump().substr(0, 200);
  }
}

// ---------------------------------------------------------------- results stored compressed

namespace {
std::string gzip_of(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string xz_of(const std::string& text) {
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  std::size_t pos = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(text.data()),
                                    text.size(), reinterpret_cast<uint8_t*>(out.data()), &pos, out.size()),
            LZMA_OK);
  out.resize(pos);
  return out;
}

std::string write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(not refused)";
}
}  // namespace

TEST(ResultsCompressed, XzAndGzipAreReadAsThePlainFileWhateverTheirName) {
  const std::string text = dump_results(full_sample());
  const auto dir = scratch_path("rb_compressed_read");
  std::filesystem::remove_all(dir);
  const std::string plain = write_bytes(dir / "plain/results.json", text);
  const std::string want = dump_results(load_results(plain));
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"xz/results.json.xz", xz_of(text)},
           {"gz/results.json.gz", gzip_of(text)},
           {"misnamed/results.json", gzip_of(text)}}) {  // known by its bytes, not its name
    SCOPED_TRACE(name);
    ASSERT_NE(bytes, text);
    const std::string path = write_bytes(dir / name, bytes);
    EXPECT_EQ(read_results_text(path), text);
    EXPECT_EQ(dump_results(load_results(path)), want);
    // Its folder names it, as a folder names its results.json.
    EXPECT_EQ(results_path(std::filesystem::path(path).parent_path().string()), path);
  }
  EXPECT_EQ(results_files_under(dir.string()),
            (std::vector<std::string>{(dir / "gz/results.json.gz").string(), (dir / "misnamed/results.json").string(),
                                      (dir / "plain/results.json").string(), (dir / "xz/results.json.xz").string()}));
}

TEST(ResultsCompressed, BrokenStreamsAreOneLineRefusalsNamingTheFile) {
  const std::string text = dump_results(full_sample());
  const auto dir = scratch_path("rb_compressed_broken");
  std::filesystem::remove_all(dir);
  const std::string xz = xz_of(text), gz = gzip_of(text);
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"cut.json.xz", xz.substr(0, xz.size() / 2), "a broken xz file (the stream ends early or is corrupt)"},
      {"cut.json.gz", gz.substr(0, gz.size() / 2), "a broken gzip file (the stream ends early)"},
      {"flipped.json.xz", xz.substr(0, 40) + std::string(1, static_cast<char>(xz[40] ^ 0x55)) + xz.substr(41),
       "a broken xz file"},
      {"trailing.json.gz", gz + "more", "a gzip file with bytes after its stream"},
      {"header.json.gz", std::string("\x1f\x8b", 2) + "not deflate", "a broken gzip file"},
      {"header.json.xz", std::string("\xfd" "7zXZ\0", 6) + "not lzma", "a broken xz file"},
  };
  for (const auto& [name, bytes, why] : cases) {
    SCOPED_TRACE(name);
    const std::string path = write_bytes(dir / name, bytes);
    const std::string what = refusal([&] { (void)load_results(path); });
    EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
    EXPECT_NE(what.find(why), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(ResultsCompressed, AStreamThatDecompressesPastTheLimitIsRefusedAsItDecompresses) {
  // Two MiB of spaces (a bomb in miniature) against a limit of one; the reader's own is 512 MiB.
  const std::string big(2u << 20, ' ');
  for (const std::string& bytes : {xz_of(big), gzip_of(big)}) {
    ASSERT_LT(bytes.size(), 20000u);
    const std::string what = refusal([&] { (void)results_text(bytes, "bomb", 1u << 20); });
    EXPECT_NE(what.find("bomb: "), std::string::npos) << what;
    EXPECT_NE(what.find("decompresses past 1 MiB: not a roofbench results file"), std::string::npos) << what;
    EXPECT_EQ(results_text(bytes, "bomb", 2u << 20), big);  // at the limit it is taken
  }
  EXPECT_EQ(results_text("{\"plain\": 1}", "plain", 4), "{\"plain\": 1}");  // plain text: no limit of this kind
}

TEST(ResultsCompressed, AFolderHoldingTwoResultsFilesIsRefusedNotGuessed) {
  const std::string text = dump_results(full_sample());
  const auto dir = scratch_path("rb_compressed_two");
  std::filesystem::remove_all(dir);
  write_bytes(dir / "run/results.json", text);
  write_bytes(dir / "run/results.json.xz", xz_of(text));
  EXPECT_NE(refusal([&] { (void)results_path((dir / "run").string()); })
                .find("holds results.json and results.json.xz: which is its run's cannot be told"),
            std::string::npos);
  EXPECT_NE(refusal([&] { (void)results_files_under(dir.string()); }).find("cannot be told"), std::string::npos);
  std::filesystem::remove(dir / "run/results.json");
  EXPECT_EQ(results_file_in((dir / "run").string()), (dir / "run/results.json.xz").string());
  EXPECT_EQ(results_file_in(dir.string()), "");
  EXPECT_NE(refusal([&] { (void)results_path(dir.string()); }).find("holds no results.json (nor results.json.xz or .gz)"),
            std::string::npos);
}

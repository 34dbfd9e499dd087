// Declared work as typed terms (roofbench/work.h): the FLOPs and bytes the rates use and the
// derivation results.json carries come from the same terms.
#include <gtest/gtest.h>

#include "roofbench/work.h"

using namespace roofbench;

TEST(Work, BytesAndFlopsAreTheTermsSummed) {
  const Count n = Count::param("n");
  const Work w = Work().read<float>("x", n).read<float>("y", n).write<float>("y = a·x + y", n).flops(2 * n, "a multiply and an add");
  const Params p = {{"n", 1000}};
  EXPECT_DOUBLE_EQ(w.bytes(p), 12000);
  EXPECT_DOUBLE_EQ(w.flops(p), 2000);
  EXPECT_EQ(w.derivation(), "reads x (n × 4 B), y (n × 4 B); writes y = a·x + y (n × 4 B): 12·n B; 2·n FLOPs (a multiply and an add)");
}

TEST(Work, TermsOverTheSameFactorsAddUpAndOthersStaySeparate) {
  const Count M = Count::param("M"), N = Count::param("N"), K = Count::param("K");
  const Work w = Work().read("A", M * K, Precision::fp16).read("B", K * N, Precision::fp16).write("C", M * N, Precision::fp32);
  EXPECT_NE(w.derivation().find(": 2·K·M + 2·K·N + 4·M·N B; no FLOPs counted"), std::string::npos) << w.derivation();
  const Work twice = Work().read<float>("x", Count::param("n")).read<float>("x again", Count::param("n"));
  EXPECT_NE(twice.derivation().find(": 8·n B"), std::string::npos) << twice.derivation();
}

TEST(Work, RepeatedReadsCountAsTrafficButTheHostMakesTheBufferOnce) {
  // A cache ceiling: one buffer of n floats, read `passes` times.
  const Work w = Work().read<float>("x", Count::param("n"), Count::param("passes"));
  const Params p = {{"n", 256}, {"passes", 100}};
  EXPECT_DOUBLE_EQ(w.bytes(p), 4.0 * 256 * 100);
  EXPECT_DOUBLE_EQ(w.host_bytes(p), 4.0 * 256);
  EXPECT_NE(w.derivation().find("x (n × 4 B, passes times): 4·n·passes B"), std::string::npos) << w.derivation();
}

TEST(Work, ConstantsKnownOnlyAtRunTimeAreNamed) {
  const Count c = Count::constant("threads", 8) * Count::param("kib") * 1024;
  EXPECT_DOUBLE_EQ(c.value({{"kib", 2}}), 8.0 * 2 * 1024);
  EXPECT_EQ(c.text(), "1024·kib·threads");
  EXPECT_THROW(c.value({{"n", 1}}), std::out_of_range);  // a parameter the size lacks
}

TEST(Work, MathCallsAreCountedByFunctionBesideTheFlopsAndBytes) {
  const Count n = Count::param("n");
  const Work w = Work()
                     .read<float>("x", n)
                     .write<float>("y", n)
                     .flops(5 * n, "sin, cos, two squares and an add")
                     .transcendentals("sin", n)
                     .transcendentals("cos", n)
                     .transcendentals("sin", 2 * n);
  const Params p = {{"n", 1000}};
  EXPECT_DOUBLE_EQ(w.bytes(p), 8000);  // calls are neither bytes
  EXPECT_DOUBLE_EQ(w.flops(p), 5000);  // nor FLOPs
  EXPECT_EQ(w.transcendentals(p), (std::map<std::string, double>{{"cos", 1000}, {"sin", 3000}}));
  EXPECT_DOUBLE_EQ(w.host_bytes(p), 8000);
  EXPECT_NE(w.derivation().find("; math calls: n sin + n cos + 2·n sin"), std::string::npos) << w.derivation();
  EXPECT_TRUE(Work().read<float>("x", n).transcendentals(p).empty());
}

TEST(Work, LaunchesAreCountedByPathBesideTheWorkAndNamedInTheDerivation) {
  const Count n = Count::param("n"), ops = Count::param("ops");
  const Work w = Work()
                     .read<float>("x", n, ops)
                     .write<float>("y", n, ops)
                     .flops(n * ops, "an add per element per step")
                     .launches("kernel", ops)
                     .launches("graph_node", 2 * ops);
  const Params p = {{"n", 1024}, {"ops", 10}};
  EXPECT_DOUBLE_EQ(w.bytes(p), 8 * 1024 * 10);  // launches are neither bytes
  EXPECT_DOUBLE_EQ(w.flops(p), 1024 * 10);      // nor FLOPs
  EXPECT_EQ(w.launches(p), (std::map<std::string, double>{{"graph_node", 20}, {"kernel", 10}}));
  EXPECT_TRUE(w.transcendentals(p).empty());
  EXPECT_NE(w.derivation().find("; launches: ops kernel + 2·ops graph_node"), std::string::npos) << w.derivation();
  EXPECT_TRUE(Work().read<float>("x", n).launches(p).empty());
}

TEST(Work, PassesOneAfterAnotherCarryTheirOwnShareOfTheWork) {
  const Count n = Count::param("n");
  const Work w = Work()
                     .phase("s = sin x")
                     .read<float>("x", n)
                     .write<float>("s", n)
                     .flops(n, "sin")
                     .transcendentals("sin", n)
                     .phase("y = s·s")
                     .read<float>("s", n, Count(3))  // read three times
                     .write<float>("y", n)
                     .flops(n, "a square");
  const Params p = {{"n", 10}};
  const auto ph = w.phases(p);
  ASSERT_EQ(ph.size(), 2u);
  EXPECT_EQ(ph[0].name, "s = sin x");
  EXPECT_DOUBLE_EQ(ph[0].bytes, 80);
  EXPECT_DOUBLE_EQ(ph[0].flops, 10);
  EXPECT_EQ(ph[0].transcendentals, (std::map<std::string, double>{{"sin", 10}}));
  EXPECT_DOUBLE_EQ(ph[1].bytes, 3 * 40 + 40);  // a pass counts a term's repeats, as the total does
  EXPECT_TRUE(ph[1].transcendentals.empty());
  EXPECT_DOUBLE_EQ(w.bytes(p), 240);  // the totals are the passes summed
  EXPECT_NE(w.derivation().find("; in 2 passes, one after another: s = sin x, y = s·s"), std::string::npos)
      << w.derivation();
  EXPECT_TRUE(Work().read<float>("x", n).phases(p).empty());
  EXPECT_THROW(Work().read<float>("x", n).phase("late"), std::logic_error);
  EXPECT_DOUBLE_EQ(w.pipeline_chunks(p), 0);  // one after another
}

TEST(Work, PipelinedPassesNameTheirCeilingsAndChunks) {
  const Count n = Count::param("n");
  const Work w = Work()
                     .phase("H2D", "pcie_h2d_pinned")
                     .read<float>("x over the host link", n)
                     .phase("kernel")
                     .read<float>("x", n)
                     .write<float>("y", n)
                     .flops(2 * n, "an FMA")
                     .phase("D2H", "pcie_d2h_pinned")
                     .write<float>("y over the host link", n)
                     .pipelined(Count::param("chunks"));
  const Params p = {{"n", 10}, {"chunks", 4}};
  const auto ph = w.phases(p);
  ASSERT_EQ(ph.size(), 3u);
  EXPECT_EQ(ph[0].ceiling, "pcie_h2d_pinned");
  EXPECT_EQ(ph[1].ceiling, "");
  EXPECT_EQ(ph[2].ceiling, "pcie_d2h_pinned");
  EXPECT_DOUBLE_EQ(ph[1].bytes, 80);
  EXPECT_DOUBLE_EQ(w.pipeline_chunks(p), 4);
  EXPECT_NE(w.derivation().find("; in 3 passes, pipelined over C = chunks chunks: H2D (at pcie_h2d_pinned), kernel, "
                                "D2H (at pcie_d2h_pinned)"),
            std::string::npos)
      << w.derivation();
  EXPECT_THROW(w.pipeline_chunks({{"n", 10}, {"chunks", 0}}), std::invalid_argument);
  EXPECT_DOUBLE_EQ(w.pipeline_streams(p), 0);  // as many as it takes
  Work on_two = w;
  on_two.pipelined(Count::param("chunks"), Count(2));
  EXPECT_DOUBLE_EQ(on_two.pipeline_streams(p), 2);
  Work on_one = w;  // one stream: the passes serialized, the least a pipeline may have
  on_one.pipelined(Count::param("chunks"), Count(1));
  EXPECT_DOUBLE_EQ(on_one.pipeline_streams(p), 1);
  Work on_none = w;
  on_none.pipelined(Count::param("chunks"), Count(0));
  EXPECT_THROW(on_none.pipeline_streams(p), std::invalid_argument);
  EXPECT_NE(on_two.derivation().find("pipelined over C = chunks chunks on S = 2 streams:"), std::string::npos)
      << on_two.derivation();
  EXPECT_THROW(Work().phase("one").read<float>("x", n).pipelined(2).pipeline_chunks(p), std::logic_error);
  // The copies' shared link: declared on a pipeline whose passes name ceilings, and said so.
  EXPECT_EQ(w.pipeline_link(), "");
  Work linked = w;
  linked.shared_link("pcie_duplex_pinned");
  EXPECT_EQ(linked.pipeline_link(), "pcie_duplex_pinned");
  EXPECT_NE(linked.derivation().find(", the copies sharing one link both ways (at pcie_duplex_pinned):"),
            std::string::npos)
      << linked.derivation();
  EXPECT_THROW(Work().phase("a").read<float>("x", n).phase("b").read<float>("x", n).shared_link("l"), std::logic_error);
  EXPECT_THROW(Work().phase("a").read<float>("x", n).phase("b").read<float>("x", n).pipelined(2).shared_link("l"),
               std::logic_error);  // no pass names a ceiling
}

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "bench/atomic_write.h"
#include "roofbench/types.h"
#include "tests/testing.h"

using namespace roofbench;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path d = roofbench::testing::scratch_path(name);
  fs::remove_all(d);
  return d;
}
std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(FileSet, CommitWritesEveryFileAndNoTemporaries) {
  const fs::path d = fresh_dir("roofbench_fileset_ok");
  ensure_writable_dir(d.string());
  FileSet set;
  set.add((d / "a.json").string(), "{}\n");
  set.add((d / "b.svg").string(), "<svg/>\n");
  set.commit();
  EXPECT_EQ(read(d / "a.json"), "{}\n");
  EXPECT_EQ(read(d / "b.svg"), "<svg/>\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 2);
}

TEST(FileSet, AFailureLeavesEarlierFilesUntouched) {
  const fs::path d = fresh_dir("roofbench_fileset_fail");
  ensure_writable_dir(d.string());
  std::ofstream(d / "a.json") << "old";
  FileSet set;
  set.add((d / "a.json").string(), "new");
  set.add((d / "missing-folder" / "b.svg").string(), "<svg/>");  // cannot be created
  EXPECT_THROW(set.commit(), InputError);
  EXPECT_EQ(read(d / "a.json"), "old");                                              // the whole set or nothing
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);  // no temporaries left
}

TEST(FileSet, UncommittedSetWritesNothing) {
  const fs::path d = fresh_dir("roofbench_fileset_none");
  ensure_writable_dir(d.string());
  {
    FileSet set;
    set.add((d / "a.json").string(), "x");
  }
  EXPECT_FALSE(fs::exists(d / "a.json"));
}

TEST(EnsureWritableDir, CreatesMissingFolders) {
  const fs::path d = fresh_dir("roofbench_mkdir") / "x" / "y";
  ensure_writable_dir(d.string());
  EXPECT_TRUE(fs::is_directory(d));
}

TEST(EnsureWritableDir, AFileInTheWayIsAnError) {
  const fs::path d = fresh_dir("roofbench_notdir");
  fs::create_directories(d);
  std::ofstream(d / "file") << "x";
  EXPECT_THROW(ensure_writable_dir((d / "file").string()), InputError);
  EXPECT_THROW(ensure_writable_dir((d / "file" / "sub").string()), InputError);
}

namespace {
// The names a reader sees in `d` (links followed), each with its content; a link that dangles
// reads as absent, as it does for every reader.
std::map<std::string, std::string> visible(const fs::path& d) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(d)) {
    const std::string n = e.path().filename().string();
    if (n == ".roofbench" || !fs::exists(e.path())) continue;
    m[n] = read(e.path());
  }
  return m;
}
std::size_t generations(const fs::path& d) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(d / ".roofbench"))
    n += e.path().filename().string().rfind("gen-", 0) == 0;
  return n;
}
}  // namespace

TEST(OutputFolder, ACommitShowsTheWholeSetThroughLinksIntoOneGeneration) {
  const fs::path d = fresh_dir("roofbench_folder_set");
  OutputFolder folder(d.string());
  ASSERT_TRUE(folder.atomic_sets()) << "this filesystem takes no symbolic links";
  folder.commit({{"results.json", "{1}"}, {"report.html", "<p>1</p>"}});
  EXPECT_EQ(visible(d), (std::map<std::string, std::string>{{"results.json", "{1}"}, {"report.html", "<p>1</p>"}}));
  EXPECT_TRUE(fs::is_symlink(d / "results.json"));
  EXPECT_EQ(fs::read_symlink(d / "results.json"), fs::path(".roofbench/current/results.json"));
  EXPECT_EQ(generations(d), 1u);

  folder.commit({{"results.json", "{2}"}});  // a partial snapshot: the other files stay
  EXPECT_EQ(visible(d), (std::map<std::string, std::string>{{"results.json", "{2}"}, {"report.html", "<p>1</p>"}}));
  EXPECT_EQ(generations(d), 1u);  // the previous generation is gone once the switch is made
}

TEST(OutputFolder, RegularFilesOfAnOlderRunAreTakenOverAndOtherFilesLeftAlone) {
  const fs::path d = fresh_dir("roofbench_folder_adopt");
  fs::create_directories(d);
  std::ofstream(d / "results.json") << "old results";
  std::ofstream(d / "summary.md") << "old summary";
  std::ofstream(d / "notes.txt") << "the user's";
  OutputFolder folder(d.string());
  folder.commit({{"results.json", "new results"}, {"summary.md", "new summary"}});
  EXPECT_EQ(visible(d), (std::map<std::string, std::string>{
                            {"results.json", "new results"}, {"summary.md", "new summary"}, {"notes.txt", "the user's"}}));
  EXPECT_FALSE(fs::is_symlink(d / "notes.txt"));
  EXPECT_EQ(generations(d), 1u);
}

TEST(OutputFolder, AFailedCommitLeavesThePreviousSetAndNoGeneration) {
  const fs::path d = fresh_dir("roofbench_folder_fail");
  OutputFolder folder(d.string());
  folder.commit({{"results.json", "v1"}, {"summary.md", "s1"}});
  fs::create_directories(d / "report.html");  // a folder in the way of one name of the set
  EXPECT_THROW(folder.commit({{"results.json", "v2"}, {"report.html", "r2"}}), InputError);
  fs::remove(d / "report.html");
  EXPECT_EQ(visible(d), (std::map<std::string, std::string>{{"results.json", "v1"}, {"summary.md", "s1"}}));
  EXPECT_EQ(generations(d), 1u);
  EXPECT_THROW(folder.commit({{"../escape", "x"}}), InputError);
  EXPECT_THROW(folder.commit({{".roofbench", "x"}}), InputError);
}

TEST(OutputFolder, ASecondWriterIsRefusedWithTheHoldersPid) {
  const fs::path d = fresh_dir("roofbench_folder_lock");
  {
    OutputFolder first(d.string());
    try {
      OutputFolder second(d.string());
      FAIL() << "a second writer got the lock";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("in use by another roofbench (pid " + std::to_string(::getpid()) + ")"),
                std::string::npos)
          << e.what();
    }
  }
  OutputFolder again(d.string());  // released with the first
  again.commit({{"a", "1"}});
  EXPECT_EQ(visible(d).at("a"), "1");
}

TEST(OutputFolder, WhatAKilledWriterLeftIsRemovedWhenTheFolderIsOpened) {
  const fs::path d = fresh_dir("roofbench_folder_stale");
  {
    OutputFolder folder(d.string());
    folder.commit({{"results.json", "v1"}});
  }
  fs::create_directories(d / ".roofbench" / "gen-1-99999");  // a generation never switched to
  std::ofstream(d / ".roofbench" / "gen-1-99999" / "results.json") << "half";
  fs::create_symlink("gen-1-99999", d / ".roofbench" / "current.tmp.99999");
  fs::create_symlink(".roofbench/current/x", d / "x.link.tmp.99999");
  OutputFolder folder(d.string());
  EXPECT_EQ(generations(d), 1u);
  EXPECT_FALSE(fs::is_symlink(d / ".roofbench" / "current.tmp.99999"));
  EXPECT_FALSE(fs::is_symlink(d / "x.link.tmp.99999"));
  EXPECT_EQ(visible(d), (std::map<std::string, std::string>{{"results.json", "v1"}}));
}

TEST(OutputFolder, AFileSetOfTheFolderTakesPlainNames) {
  const fs::path d = fresh_dir("roofbench_folder_fileset");
  OutputFolder folder(d.string());
  FileSet set(folder);
  set.add("a.json", "{}");
  EXPECT_THROW(set.add((d / "a.json").string(), "{}"), InputError);
  set.commit();
  EXPECT_EQ(set.paths(), std::vector<std::string>{(d / "a.json").string()});
  EXPECT_EQ(read(d / "a.json"), "{}");
}

TEST(FileSet, PathsNamedTwiceOrAFolderInTheWayAreRefusedBeforeAnythingIsWritten) {
  const fs::path d = fresh_dir("roofbench_fileset_checked");
  ensure_writable_dir(d.string());
  {
    FileSet set;  // the same file twice, spelt two ways
    set.add((d / "x.md").string(), "one");
    set.add((d / "." / "x.md").string(), "two");
    EXPECT_THROW(set.commit(), InputError);
  }
  fs::create_directories(d / "adir");
  {
    FileSet set;  // the first file would be in place before the second failed to rename
    set.add((d / "new.md").string(), "md");
    set.add((d / "adir").string(), "json");
    EXPECT_THROW(set.commit(), InputError);
  }
  EXPECT_FALSE(fs::exists(d / "new.md"));
  EXPECT_FALSE(fs::exists(d / "x.md"));
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);  // adir alone, no temporaries
}

TEST(FileSet, AFileOfAnOutputFolderIsNotWrittenThroughItsLink) {
  const fs::path d = fresh_dir("roofbench_fileset_managed");
  {
    OutputFolder folder(d.string());
    folder.commit({{"results.json", "the run's"}});
  }
  FileSet set;
  set.add((d / "results.json").string(), "verdicts");
  try {
    set.commit();
    FAIL() << "wrote over a run's results.json";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a file of a roofbench output folder"), std::string::npos) << e.what();
  }
  EXPECT_EQ(visible(d), (std::map<std::string, std::string>{{"results.json", "the run's"}}));
}

TEST(OutputFolder, AFolderItMadeAndNeverWroteToIsRemovedAgain) {
  const fs::path d = fresh_dir("roofbench_folder_unused");
  { OutputFolder folder(d.string()); }  // a command that failed or was stopped before its first file
  EXPECT_FALSE(fs::exists(d));
  fs::create_directories(d);  // one that was there already stays, written to or not
  { OutputFolder folder(d.string()); }
  EXPECT_TRUE(fs::is_directory(d));
  const fs::path w = fresh_dir("roofbench_folder_used");
  {
    OutputFolder folder(w.string());
    folder.commit({{"a", "1"}});
  }
  EXPECT_EQ(visible(w).at("a"), "1");
}

TEST(OutputFolder, ACopyMadeWithCpDashRLIsWrittenToAgain) {
  const fs::path d = fresh_dir("roofbench_folder_original");
  {
    OutputFolder folder(d.string());
    folder.commit({{"results.json", "v1"}, {"summary.md", "s1"}});
  }
  const fs::path copy = fresh_dir("roofbench_folder_copy");
  ASSERT_EQ(std::system(("cp -rL " + d.string() + " " + copy.string()).c_str()), 0);
  ASSERT_FALSE(fs::is_symlink(copy / ".roofbench" / "current"));
  {
    OutputFolder folder(copy.string());
    folder.commit({{"results.json", "v2"}});
  }
  EXPECT_EQ(visible(copy), (std::map<std::string, std::string>{{"results.json", "v2"}, {"summary.md", "s1"}}));
  EXPECT_EQ(generations(copy), 1u);
  // A folder at .roofbench/current whose files are not the folder's own is not taken for a copy.
  const fs::path odd = fresh_dir("roofbench_folder_odd");
  fs::create_directories(odd / ".roofbench" / "current");
  std::ofstream(odd / ".roofbench" / "current" / "results.json") << "?";
  EXPECT_THROW(OutputFolder folder(odd.string()), InputError);
  EXPECT_TRUE(fs::exists(odd / ".roofbench" / "current" / "results.json"));
}

TEST(UnusedFolderName, ASecondRunInTheSameSecondGetsAFolderOfItsOwn) {
  const fs::path d = fresh_dir("roofbench_default_20261125T000000Z");
  fs::remove_all(d.string() + "-2");
  EXPECT_EQ(unused_folder_name(d.string()), d.string());
  fs::create_directories(d);
  EXPECT_EQ(unused_folder_name(d.string()), d.string() + "-2");
  fs::create_directories(d.string() + "-2");
  EXPECT_EQ(unused_folder_name(d.string()), d.string() + "-3");
  fs::remove_all(d.string() + "-2");
}

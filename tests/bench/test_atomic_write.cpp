#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/atomic_write.h"
#include "roofbench/types.h"

using namespace roofbench;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / name;
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

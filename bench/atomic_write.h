#pragma once
// Output files are written whole or not at all: each goes to a temporary name in the same
// folder and is renamed over the final name only after every file of the set was written.
#include <string>
#include <utility>
#include <vector>

namespace roofbench {

// Checks that `dir` exists (creating it if needed) and that a file can be created in it;
// throws InputError with a one-line reason otherwise. Run before any long measurement.
void ensure_writable_dir(const std::string& dir);

class FileSet {
 public:
  FileSet() = default;
  FileSet(const FileSet&) = delete;
  FileSet& operator=(const FileSet&) = delete;
  ~FileSet();  // removes temporaries that were never committed

  void add(const std::string& path, std::string content);  // kept in memory until commit
  // Writes every file to a temporary name, then renames them all into place. On any failure
  // the temporaries are removed, no final name is touched, and InputError is thrown.
  void commit();
  std::vector<std::string> paths() const;

 private:
  std::vector<std::pair<std::string, std::string>> files_;
  std::vector<std::string> temps_;
};

}  // namespace roofbench

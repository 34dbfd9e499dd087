#pragma once
// Output files are written whole or not at all, and an output folder changes from one complete
// set of files to the next in a single step.
//
// An OutputFolder is a folder one roofbench command owns while it runs: it holds a lock
// (.roofbench/lock, flock) that a second command on the same folder is refused with, and its
// files are symbolic links into a generation folder (name -> .roofbench/current/name, where
// .roofbench/current -> gen-...). A commit writes every file of the new set into a fresh
// generation (with hard links to the files it leaves alone), then renames a new `current` link
// over the old one: one atomic rename(2) turns the old set into the new one, so a process
// killed at any point leaves either the previous set or the new one, never a mix.
//
// A FileSet writes loose files (compare --json/--markdown, rooflines.svg): each whole, through
// a temporary name and a rename, after checks that refuse a path named twice, a folder in the
// way and a file inside an output folder; the set only as atomic as its renames one after another.
#include <string>
#include <utility>
#include <vector>

namespace roofbench {

// Checks that `dir` exists (creating it if needed) and that a file can be created in it;
// throws InputError with a one-line reason otherwise. Run before any long measurement.
void ensure_writable_dir(const std::string& dir);

// A default output folder's name: `base` when nothing is there yet, else base-2, base-3, ...
// (two runs started in the same second must not write over each other's files).
std::string unused_folder_name(const std::string& base);

class OutputFolder {
 public:
  // Creates the folder if needed, checks it is writable and takes its lock; throws InputError
  // when it cannot, or when another process holds the lock (its pid in the message). Removes
  // what a killed command left behind (stale generations and temporary links).
  explicit OutputFolder(std::string dir);
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  // Releases the lock. A folder this object created and never committed to is removed again
  // (a command that failed or was stopped before writing anything leaves nothing behind).
  ~OutputFolder();

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const;  // dir/name
  // Replaces the files named (plain names, no '/') by these contents all at once; the folder's
  // other files stay as they are. A regular file of the same name (from an older roofbench or
  // from a user) is taken over with its content unchanged before the switch. On any failure
  // nothing visible changes and InputError is thrown (a full disk: exit 2, previous set intact).
  void commit(const std::vector<std::pair<std::string, std::string>>& files);
  // False where the filesystem takes no symbolic links: files are then renamed into place one
  // by one (each still whole), and a kill during that last step can mix two sets.
  bool atomic_sets() const { return symlinks_; }
  // Whether a commit has been made (or attempted): the folder no longer holds only what it held.
  bool committed() const { return committed_; }

 private:
  std::string current_generation() const;  // "" when the folder has none yet
  void switch_to(const std::string& generation);
  void show(const std::string& name);
  void remove_stale();
  void take_lock();
  void prepare();
  void adopt_dereferenced_copy();

  std::string dir_, meta_;
  int lock_fd_ = -1;
  bool symlinks_ = true;
  bool created_ = false;    // the folder did not exist before this object
  bool committed_ = false;  // a commit put files in it
};

// What a FileSet of loose files checks before it writes anything: no path named twice, no folder
// in the way, no file inside an output folder. InputError naming the path otherwise. For a
// command that writes such files at its end, to check them at its start.
void check_loose_paths(const std::vector<std::string>& paths);

class FileSet {
 public:
  FileSet() = default;
  // Files of one OutputFolder: commit() switches the folder's set in one step.
  explicit FileSet(OutputFolder& folder) : folder_(&folder) {}
  FileSet(const FileSet&) = delete;
  FileSet& operator=(const FileSet&) = delete;
  ~FileSet();  // removes temporaries that were never committed

  // A path; with an OutputFolder, a plain name in it or a path whose folder is its folder.
  void add(const std::string& path, std::string content);  // kept in memory until commit
  // Writes every file to a temporary name, then puts them all into place. On any failure the
  // temporaries are removed, no final name is touched, and InputError is thrown.
  void commit();
  std::vector<std::string> paths() const;

 private:
  OutputFolder* folder_ = nullptr;
  std::vector<std::pair<std::string, std::string>> files_;
  std::vector<std::string> temps_;
};

}  // namespace roofbench

#include "bench/atomic_write.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>

#include "roofbench/types.h"

namespace roofbench {

namespace fs = std::filesystem;

namespace {
constexpr const char* kMeta = ".roofbench";

std::string errno_text() {
  return std::strerror(errno);
}

void write_all(const std::string& path, const std::string& content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path + ": cannot create: " + errno_text());
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string why = errno_text();
      ::close(fd);
      throw InputError(path + ": write failed: " + why);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    std::string why = errno_text();
    ::close(fd);
    throw InputError(path + ": cannot flush: " + why);
  }
  if (::close(fd) != 0) throw InputError(path + ": cannot flush: " + errno_text());
}

std::string read_all(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot read: " + errno_text());
  std::string s;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string why = errno_text();
      ::close(fd);
      throw InputError(path + ": cannot read: " + why);
    }
    if (n == 0) break;
    s.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return s;
}

// A folder's entries are on disk once the folder itself is synced (renames and links included).
void sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // best effort: some filesystems refuse fsync on a folder
  ::close(fd);
}

// `to` gets the content of `from`: a hard link where the filesystem allows, else a copy.
void link_or_copy(const std::string& from, const std::string& to) {
  if (::link(from.c_str(), to.c_str()) == 0) return;
  write_all(to, read_all(from));
}

std::string temp_name(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

std::string unique_generation() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return "gen-" + std::to_string(ns) + "-" + std::to_string(::getpid());
}

void check_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name == kMeta || name.find('/') != std::string::npos)
    throw InputError("'" + name + "' is not a file name roofbench can write in an output folder");
}
}  // namespace

void ensure_writable_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError("output folder '" + dir + "' exists and is not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw InputError("cannot create output folder '" + dir + "': " + ec.message());
  const std::string probe = (fs::path(dir) / (".roofbench-probe." + std::to_string(::getpid()))).string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError("output folder '" + dir + "' is not writable: " + errno_text());
  ::close(fd);
  ::unlink(probe.c_str());
}

std::string unused_folder_name(const std::string& base) {
  std::error_code ec;
  std::string name = base;
  for (int n = 2; fs::exists(fs::symlink_status(name, ec)); ++n) name = base + "-" + std::to_string(n);
  return name;
}

// ------------------------------------------------------------------------------- OutputFolder

OutputFolder::OutputFolder(std::string dir) : dir_(std::move(dir)) {
  std::error_code exists_ec;
  created_ = !fs::exists(fs::symlink_status(dir_, exists_ec));
  meta_ = (fs::path(dir_) / kMeta).string();
  const std::string lock = meta_ + "/lock";
  // A writer that made this folder and gives it up unused removes it again, lock file included
  // (the destructor): a lock taken on a file it had just unlinked would be no lock. So the lock
  // is taken again until the file locked is the file at the path.
  for (int attempt = 0;; ++attempt) {
    if (attempt == 20) throw InputError("cannot lock output folder '" + dir_ + "': its lock file keeps being replaced");
    ensure_writable_dir(dir_);
    if (::mkdir(meta_.c_str(), 0755) != 0 && errno != EEXIST) {
      if (errno == ENOENT) continue;  // the folder went away just now
      throw InputError("cannot create '" + meta_ + "': " + errno_text());
    }
    struct stat st {};
    if (::lstat(meta_.c_str(), &st) != 0) continue;
    if (!S_ISDIR(st.st_mode))
      throw InputError("'" + meta_ + "' is in the way: roofbench keeps its generations and lock in that folder");
    lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) {
      if (errno == ENOENT) continue;
      throw InputError("cannot open '" + lock + "': " + errno_text());
    }
    take_lock();
    struct stat by_fd {}, by_path {};
    if (::fstat(lock_fd_, &by_fd) == 0 && ::stat(lock.c_str(), &by_path) == 0 && by_fd.st_ino == by_path.st_ino &&
        by_fd.st_dev == by_path.st_dev)
      break;
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  try {
    prepare();
  } catch (...) {  // the destructor does not run for a constructor that throws
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw;
  }
}

// The lock on the open lock file, or InputError naming the holder (closing the file).
void OutputFolder::take_lock() {
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder;
    char buf[32] = {};
    if (::pread(lock_fd_, buf, sizeof buf - 1, 0) > 0) holder = buf;
    holder.erase(std::remove(holder.begin(), holder.end(), '\n'), holder.end());
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK)
      throw InputError("output folder '" + dir_ + "' is in use by another roofbench" +
                       (holder.empty() ? std::string() : " (pid " + holder + ")") +
                       ": wait for it to end, or choose another --out");
    errno = err;
    throw InputError("cannot lock output folder '" + dir_ + "': " + errno_text());
  }
}

// Under the lock: the holder's pid, the link probe, a copy's generations taken over, what a
// killed writer left removed.
void OutputFolder::prepare() {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
    // the pid is for the message a second writer gets; the lock holds without it
  }
  // Symbolic links: probe once, so that a filesystem without them falls back at once.
  const std::string probe = meta_ + "/probe-link." + std::to_string(::getpid());
  ::unlink(probe.c_str());
  if (::symlink("probe", probe.c_str()) != 0) {
    if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
      throw InputError("cannot create a link in '" + meta_ + "': " + errno_text());
    symlinks_ = false;
  } else {
    ::unlink(probe.c_str());
  }
  adopt_dereferenced_copy();
  remove_stale();
}

// A folder copied with `cp -rL` (what docs/results-schema.md suggests) holds its files as plain
// files and `.roofbench/current` as a folder, not a link. When each file in that folder is there
// as a plain file too, the copied generations are only copies of them: they are dropped, and the
// plain files are taken over like any other (commit).
void OutputFolder::adopt_dereferenced_copy() {
  const std::string cur = meta_ + "/current";
  struct stat st {};
  if (::lstat(cur.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  std::error_code ec;
  for (fs::directory_iterator it(cur, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find(".tmp.") != std::string::npos) continue;  // a half-made file, never shown
    struct stat top {};
    const std::string mine = path(name);
    if (::lstat(mine.c_str(), &top) != 0 || !S_ISREG(top.st_mode))
      throw InputError("'" + cur + "' is a folder, not roofbench's link to its current files, and '" + mine +
                       "' is not a plain file beside it: if this folder is a copy, copy it again with `cp -r` (or "
                       "remove its .roofbench folder)");
  }
  if (ec) throw InputError("cannot list '" + cur + "': " + ec.message());
  fs::remove_all(cur, ec);
  if (ec) throw InputError("cannot remove '" + cur + "', a copy of a generation: " + ec.message());
}

OutputFolder::~OutputFolder() {
  if (created_ && !committed_ && lock_fd_ >= 0) {  // nothing but the lock in it: as if never made
    ::unlink((meta_ + "/lock").c_str());
    ::rmdir(meta_.c_str());
    ::rmdir(dir_.c_str());  // fails, leaving it, if anything else is there
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

std::string OutputFolder::path(const std::string& name) const {
  return (fs::path(dir_) / name).string();
}

std::string OutputFolder::current_generation() const {
  const std::string link = meta_ + "/current";
  char buf[512];
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n < 0) {
    if (errno == ENOENT) return "";
    throw InputError("'" + link + "' is not roofbench's link to its current files: " + errno_text());
  }
  return std::string(buf, static_cast<std::size_t>(n));
}

// What a killed command left: generations no link points to, half-made links. Runs under the
// lock, so no other writer is between its steps.
void OutputFolder::remove_stale() {
  const std::string cur = current_generation();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(meta_, ec)) {
    const std::string n = e.path().filename().string();
    if ((n.rfind("gen-", 0) == 0 && n != cur) || n.rfind("current.tmp.", 0) == 0) fs::remove_all(e.path(), ec);
  }
  for (const auto& e : fs::directory_iterator(dir_, ec)) {  // a half-made link, a writability probe
    const std::string n = e.path().filename().string();
    if ((n.find(".link.tmp.") != std::string::npos && e.is_symlink(ec)) || n.rfind(".roofbench-probe.", 0) == 0)
      ::unlink(e.path().c_str());
  }
}

// One rename(2): every visible name now resolves into `generation`.
void OutputFolder::switch_to(const std::string& generation) {
  const std::string tmp = meta_ + "/current.tmp." + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  if (::symlink(generation.c_str(), tmp.c_str()) != 0)
    throw InputError("cannot create a link in '" + meta_ + "': " + errno_text());
  if (::rename(tmp.c_str(), (meta_ + "/current").c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw InputError("cannot switch '" + meta_ + "/current': " + why);
  }
  sync_dir(meta_);
}

// Makes `name` a link into the current generation. A regular file there (an older roofbench's,
// or a user's) is first copied into the current generation, so that what the name shows does
// not change until the switch.
void OutputFolder::show(const std::string& name) {
  const std::string p = path(name);
  const std::string want = std::string(kMeta) + "/current/" + name;
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError("'" + p + "' is a folder: roofbench cannot write its file there");
    if (S_ISLNK(st.st_mode)) {
      char buf[512];
      ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
      if (n >= 0 && std::string(buf, static_cast<std::size_t>(n)) == want) return;
    }
    std::string cur = current_generation();
    if (cur.empty()) {  // the folder's first set: its files so far become generation zero
      cur = unique_generation() + "-0";
      if (::mkdir((meta_ + "/" + cur).c_str(), 0755) != 0)
        throw InputError("cannot create '" + meta_ + "/" + cur + "': " + errno_text());
      switch_to(cur);
    }
    const std::string kept = meta_ + "/" + cur + "/" + name, tmp = temp_name(kept);
    ::unlink(tmp.c_str());
    if (S_ISREG(st.st_mode))
      link_or_copy(p, tmp);
    else
      write_all(tmp, read_all(p));  // a link of the user's: its content, as it reads now
    if (::rename(tmp.c_str(), kept.c_str()) != 0)
      throw InputError("cannot keep '" + p + "' in '" + kept + "': " + errno_text());
  } else if (errno == ENOENT) {  // a new name: one symlink(2), no temporary to leave behind
    if (::symlink(want.c_str(), p.c_str()) != 0) throw InputError("cannot create '" + p + "': " + errno_text());
    return;
  } else {
    throw InputError("'" + p + "': " + errno_text());
  }
  const std::string tmp = p + ".link.tmp." + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  if (::symlink(want.c_str(), tmp.c_str()) != 0) throw InputError("cannot create '" + tmp + "': " + errno_text());
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw InputError("cannot put '" + p + "' in place: " + why);
  }
}

void OutputFolder::commit(const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& f : files) check_name(f.first);
  committed_ = true;  // from here on the folder is left as this commit leaves it
  if (!symlinks_) {
    FileSet loose;
    for (const auto& [name, content] : files) loose.add(path(name), content);
    loose.commit();
    return;
  }
  const std::string old = current_generation();
  const std::string gen = unique_generation();
  const std::string gdir = meta_ + "/" + gen;
  if (::mkdir(gdir.c_str(), 0755) != 0) throw InputError("cannot create '" + gdir + "': " + errno_text());
  struct Undo {
    std::string dir;
    ~Undo() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } undo{gdir};

  for (const auto& [name, content] : files) {
    try {
      write_all(gdir + "/" + name, content);
    } catch (const InputError& e) {  // said of the name the user sees, the internal path dropped
      const std::string why = e.what(), inner = gdir + "/" + name + ": ";
      throw InputError(path(name) + ": " + (why.rfind(inner, 0) == 0 ? why.substr(inner.size()) : why) +
                       " (the folder still holds its previous files)");
    }
  }
  if (!old.empty()) {  // the files this set leaves alone carry over as they are
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(meta_ + "/" + old, ec)) {
      const std::string n = e.path().filename().string();
      if (n.find(".tmp.") != std::string::npos) continue;
      if (std::none_of(files.begin(), files.end(), [&](const auto& f) { return f.first == n; }))
        link_or_copy(e.path().string(), gdir + "/" + n);
    }
    if (ec) throw InputError("cannot list '" + meta_ + "/" + old + "': " + ec.message());
  }
  sync_dir(gdir);
  // A new name shows through a link that dangles (reads as absent) until the switch.
  for (const auto& f : files) show(f.first);
  sync_dir(dir_);

  switch_to(gen);
  undo.dir.clear();
  remove_stale();  // the previous generation (and a generation zero show() may have made)
}

// ------------------------------------------------------------------------------------ FileSet

void check_loose_paths(const std::vector<std::string>& paths) {
  std::set<std::string> seen;
  for (const auto& path : paths) {
    std::error_code ec;
    const fs::path target = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (!seen.insert(ec ? path : target.string()).second)
      throw InputError(path + ": named twice among the files to write");
    if (fs::is_directory(path, ec)) throw InputError(path + ": is a folder, not a file to write");
    if (!ec)
      for (const auto& part : target)
        if (part == kMeta)
          throw InputError(path + ": is a file of a roofbench output folder (run, report, merge); write it elsewhere");
  }
}

FileSet::~FileSet() {
  for (const auto& t : temps_) ::unlink(t.c_str());
}

void FileSet::add(const std::string& path, std::string content) {
  if (folder_) check_name(path);
  files_.emplace_back(path, std::move(content));
}

std::vector<std::string> FileSet::paths() const {
  std::vector<std::string> p;
  for (const auto& f : files_) p.push_back(folder_ ? folder_->path(f.first) : f.first);
  return p;
}

void FileSet::commit() {
  if (folder_) {
    folder_->commit(files_);
    return;
  }
  std::vector<std::string> paths;
  for (const auto& f : files_) paths.push_back(f.first);
  check_loose_paths(paths);
  try {
    for (const auto& [path, content] : files_) {
      temps_.push_back(temp_name(path));
      write_all(temps_.back(), content);
    }
  } catch (...) {
    for (const auto& t : temps_) ::unlink(t.c_str());
    temps_.clear();
    throw;
  }
  // rename(2) is atomic per file; all contents are already on disk and the paths were checked,
  // so a failure here can only come from a folder vanishing or changing under this process.
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (::rename(temps_[i].c_str(), files_[i].first.c_str()) != 0)
      throw InputError(files_[i].first + ": cannot rename into place: " + errno_text());
  }
  temps_.clear();
}

}  // namespace roofbench

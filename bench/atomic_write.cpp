#include "bench/atomic_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "roofbench/types.h"

namespace roofbench {

namespace fs = std::filesystem;

namespace {
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
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw InputError(path + ": cannot flush: " + errno_text());
}

std::string temp_name(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
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

FileSet::~FileSet() {
  for (const auto& t : temps_) ::unlink(t.c_str());
}

void FileSet::add(const std::string& path, std::string content) {
  files_.emplace_back(path, std::move(content));
}

std::vector<std::string> FileSet::paths() const {
  std::vector<std::string> p;
  for (const auto& f : files_) p.push_back(f.first);
  return p;
}

void FileSet::commit() {
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
  // rename(2) is atomic per file; all contents are already on disk, so a failure here can only
  // come from the folder itself vanishing.
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (::rename(temps_[i].c_str(), files_[i].first.c_str()) != 0)
      throw InputError(files_[i].first + ": cannot rename into place: " + errno_text());
  }
  temps_.clear();
}

}  // namespace roofbench

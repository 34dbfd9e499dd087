// Fault injection for the tests of killed and starved runs, loaded with LD_PRELOAD into an
// unchanged roofbench. It watches the calls that change files under one folder and, as told by
// the environment:
//   ROOFBENCH_FAULT_DIR=/abs/dir     the folder watched (nothing happens without it)
//   ROOFBENCH_FAULT_TRACE=/abs/file  appends "N call path" for each watched call
//   ROOFBENCH_FAULT_KILL_AT=N        SIGKILLs the process just before the N-th watched call
//   ROOFBENCH_FAULT_ENOSPC=1         every write(2) to a file under the folder fails: ENOSPC
// Watched calls: open/openat/creat for writing, write, rename/renameat, link, symlink, unlink,
// mkdir. The numbering is the order a run makes them in, so one traced run maps each step of a
// commit to the N that stops the process right before it.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
const char* g_dir = nullptr;
std::size_t g_dir_len = 0;
const char* g_trace = nullptr;
long g_kill_at = -1;
bool g_enospc = false;
long g_count = 0;

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

__attribute__((constructor)) void init() {
  g_dir = std::getenv("ROOFBENCH_FAULT_DIR");
  if (g_dir) g_dir_len = std::strlen(g_dir);
  g_trace = std::getenv("ROOFBENCH_FAULT_TRACE");
  if (const char* k = std::getenv("ROOFBENCH_FAULT_KILL_AT")) g_kill_at = std::atol(k);
  g_enospc = std::getenv("ROOFBENCH_FAULT_ENOSPC") != nullptr;
}

// `path` made absolute against the working folder (no other normalisation: the tests pass
// absolute folders), and whether it lies under the watched one.
bool watched(const char* path) {
  if (!g_dir || !path) return false;
  char buf[4096];
  if (path[0] != '/') {
    if (!getcwd(buf, sizeof buf)) return false;
    std::size_t n = std::strlen(buf);
    std::snprintf(buf + n, sizeof buf - n, "/%s", path);
    path = buf;
  }
  return std::strncmp(path, g_dir, g_dir_len) == 0 && (path[g_dir_len] == '/' || path[g_dir_len] == 0);
}

bool watched_fd(int fd) {
  if (!g_dir) return false;
  char link[64], target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = 0;
  return watched(target);
}

void step(const char* call, const char* path) {
  const int saved = errno;
  ++g_count;
  if (g_trace) {
    static auto open_ = real<int (*)(const char*, int, ...)>("open");
    static auto write_ = real<ssize_t (*)(int, const void*, size_t)>("write");
    int fd = open_(g_trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      char line[4200];
      int n = std::snprintf(line, sizeof line, "%ld %s %s\n", g_count, call, path ? path : "-");
      write_(fd, line, n > 0 ? static_cast<size_t>(n) : 0);
      close(fd);
    }
  }
  if (g_count == g_kill_at) kill(getpid(), SIGKILL);
  errno = saved;
}

bool for_writing(int flags) {
  return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
}
}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  static auto f = real<int (*)(const char*, int, ...)>("open");
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (for_writing(flags) && watched(path)) step("open", path);
  return f(path, flags, mode);
}
int open64(const char* path, int flags, ...) {
  static auto f = real<int (*)(const char*, int, ...)>("open64");
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (for_writing(flags) && watched(path)) step("open", path);
  return f(path, flags, mode);
}
int openat(int dirfd, const char* path, int flags, ...) {
  static auto f = real<int (*)(int, const char*, int, ...)>("openat");
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (for_writing(flags) && dirfd == AT_FDCWD && watched(path)) step("open", path);
  return f(dirfd, path, flags, mode);
}
int creat(const char* path, mode_t mode) {
  static auto f = real<int (*)(const char*, mode_t)>("creat");
  if (watched(path)) step("open", path);
  return f(path, mode);
}
ssize_t write(int fd, const void* buf, size_t n) {
  static auto f = real<ssize_t (*)(int, const void*, size_t)>("write");
  if (fd > 2 && g_dir && watched_fd(fd)) {
    step("write", nullptr);
    if (g_enospc) {
      errno = ENOSPC;
      return -1;
    }
  }
  return f(fd, buf, n);
}
int rename(const char* from, const char* to) {
  static auto f = real<int (*)(const char*, const char*)>("rename");
  if (watched(to)) step("rename", to);
  return f(from, to);
}
int renameat(int fd1, const char* from, int fd2, const char* to) {
  static auto f = real<int (*)(int, const char*, int, const char*)>("renameat");
  if (fd2 == AT_FDCWD && watched(to)) step("rename", to);
  return f(fd1, from, fd2, to);
}
int link(const char* from, const char* to) {
  static auto f = real<int (*)(const char*, const char*)>("link");
  if (watched(to)) step("link", to);
  return f(from, to);
}
int symlink(const char* target, const char* path) {
  static auto f = real<int (*)(const char*, const char*)>("symlink");
  if (watched(path)) step("symlink", path);
  return f(target, path);
}
int unlink(const char* path) {
  static auto f = real<int (*)(const char*)>("unlink");
  if (watched(path)) step("unlink", path);
  return f(path);
}
int mkdir(const char* path, mode_t mode) {
  static auto f = real<int (*)(const char*, mode_t)>("mkdir");
  if (watched(path)) step("mkdir", path);
  return f(path, mode);
}

}  // extern "C"

# Sourced by gpu-check.sh and sanitize.sh on the GPU machine: unpacks an archive made by
# pack-build.sh and sets up how its binaries find their libraries.
#   source scripts/unpack-build.sh ARCHIVE.tar.xz
# Sets: stage (the unpack folder), bin (its bin/), libs_report (every binary's ldd), and
# LD_LIBRARY_PATH. Returns 2 when the archive does not unpack, 1 when a library is missing.
unpack_build() {
  local archive=$1
  stage=$(mktemp -d)
  tar -xJf "$archive" -C "$stage" || { echo "unpack-build: cannot unpack $archive" >&2; return 2; }
  bin=$stage/roofbench/bin
  # CUPTI dlopens libnvperf_host from the archive's lib/ (pack-build.sh puts it there).
  export LD_LIBRARY_PATH=$stage/roofbench/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # cuBLAS is not in the archive (see pack-build.sh): use the toolkit's.
  # (ldd's output captured first: a grep -q that leaves early fails the pipe under pipefail.)
  if ! grep -q 'libcublas.*=> /' <<<"$(ldd "$bin/roofbench" 2>&1)"; then
    local lib
    # Files and links only, the toolkit's usual homes first: perf's build-id cache
    # (~/.debug/usr/local/cuda-*/lib/libcublasLt.so.13/) holds folders of the same names, and a
    # folder on LD_LIBRARY_PATH named like a library stops the loader ("cannot read file data").
    lib=$(dirname "$(find /usr/local /usr/lib /opt / \( -type f -o -type l \) -name 'libcublasLt.so.1[0-9]' \
      -print -quit 2>/dev/null)")
    [ -n "$lib" ] && [ "$lib" != . ] && export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  ldd_all() { for b in "$bin"/*; do echo "== $(basename "$b")"; ldd "$b" 2>&1; done; }
  libs_report=$(ldd_all)
  # The archive's libstdc++ comes from the build machine (Debian 12, glibc 2.36). On a machine with
  # an older glibc it cannot load; that machine's own libstdc++ serves as well (the binaries need
  # GLIBCXX_3.4.29, GCC 11's).
  if grep -q "version .GLIBC_[0-9.]*' not found" <<<"$libs_report"; then
    echo "unpack-build: this machine's glibc is older than the build machine's; using its own libstdc++ and libgcc_s" >&2
    mkdir -p "$stage/roofbench/lib-unused"
    mv "$stage/roofbench/lib/"libstdc++.so.* "$stage/roofbench/lib/"libgcc_s.so.* "$stage/roofbench/lib-unused/" 2>/dev/null
    libs_report=$(ldd_all)
  fi
  if grep -q 'not found' <<<"$libs_report"; then
    echo "unpack-build: a library is missing:" >&2
    grep 'not found' <<<"$libs_report" | sort -u >&2
    return 1
  fi
  return 0
}

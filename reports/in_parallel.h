#pragma once
// work(i) for every i in [0, n), shared out over the cores with OpenMP; an exception thrown by any
// is rethrown as it was (its type kept) once all have run. compare's and history's statistics.
#include <cstddef>
#include <exception>
#include <vector>

namespace roofbench {

template <typename Work>
void in_parallel(std::size_t n, Work work) {
  std::vector<std::exception_ptr> failed(n);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(n); ++k) {
    try {
      work(static_cast<std::size_t>(k));
    } catch (...) {
      failed[static_cast<std::size_t>(k)] = std::current_exception();
    }
  }
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace roofbench

// The order in which a GEMM's blocks take the tiles of C. Shared by the CUDA kernels and the host
// test that checks it (tests/kernels/test_tile_order.cpp).
#pragma once

#ifndef ROOFBENCH_HOST_DEVICE
#ifdef __CUDACC__
#define ROOFBENCH_HOST_DEVICE __host__ __device__
#else
#define ROOFBENCH_HOST_DEVICE
#endif
#endif

namespace roofbench::gemm {

struct TileIndex {
  int m, n;  // the tile's row and column among tiles_m x tiles_n
};

// Grouped order: block `id` of a one-dimensional grid of tiles_m * tiles_n blocks takes the tiles
// `group` tile rows at a time, down each column of the group before the next column (Triton's
// GROUP_SIZE_M order). The blocks in flight together then read a few panels of A and a band of
// B's columns, which stay in L2, where row after row of tiles would sweep all of B through L2 for
// every tile row (at 8192^3 in 16 bits, B is 128 MB against an L2 of 50 to 60 MB). A bijection of
// [0, tiles_m * tiles_n) onto the tiles; the last group may hold fewer rows.
ROOFBENCH_HOST_DEVICE inline TileIndex grouped_tile(int id, int tiles_m, int tiles_n, int group) {
  const int per_group = group * tiles_n;
  const int first_m = id / per_group * group;
  const int rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  const int in_group = id - id / per_group * per_group;
  return {first_m + in_group % rows, in_group / rows};
}

}  // namespace roofbench::gemm

// The grouped tile order of the GEMM kernels (kernels/gemm/tile_order.h): every tile of C taken
// by exactly one block, for tile grids that fill their groups and ones that leave the last short.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "kernels/gemm/tile_order.h"

using roofbench::gemm::grouped_tile;
using roofbench::gemm::TileIndex;

TEST(TileOrder, EveryTileIsTakenByExactlyOneBlock) {
  for (const int group : {1, 4, 8})
    for (const int tiles_m : {1, 3, 8, 9, 17, 64})
      for (const int tiles_n : {1, 2, 7, 64}) {
        std::set<std::pair<int, int>> seen;
        for (int id = 0; id < tiles_m * tiles_n; ++id) {
          const TileIndex t = grouped_tile(id, tiles_m, tiles_n, group);
          ASSERT_TRUE(t.m >= 0 && t.m < tiles_m && t.n >= 0 && t.n < tiles_n)
              << "block " << id << " -> (" << t.m << ", " << t.n << ") of " << tiles_m << " x " << tiles_n;
          EXPECT_TRUE(seen.insert({t.m, t.n}).second) << "tile (" << t.m << ", " << t.n << ") taken twice";
        }
        EXPECT_EQ(seen.size(), static_cast<std::size_t>(tiles_m * tiles_n));
      }
}

TEST(TileOrder, BlocksGoDownAGroupsColumnBeforeTheNext) {
  // 20 x 5 tiles in groups of 8: the first 8 blocks are column 0 of rows 0-7, the next 8 column 1;
  // the last group holds rows 16-19, four blocks a column.
  EXPECT_EQ(grouped_tile(0, 20, 5, 8).m, 0);
  EXPECT_EQ(grouped_tile(7, 20, 5, 8).m, 7);
  EXPECT_EQ(grouped_tile(7, 20, 5, 8).n, 0);
  EXPECT_EQ(grouped_tile(8, 20, 5, 8).m, 0);
  EXPECT_EQ(grouped_tile(8, 20, 5, 8).n, 1);
  EXPECT_EQ(grouped_tile(80, 20, 5, 8).m, 16);
  EXPECT_EQ(grouped_tile(84, 20, 5, 8).m, 16);
  EXPECT_EQ(grouped_tile(84, 20, 5, 8).n, 1);
  EXPECT_EQ(grouped_tile(99, 20, 5, 8).m, 19);
  EXPECT_EQ(grouped_tile(99, 20, 5, 8).n, 4);
  // A group of one is row after row.
  EXPECT_EQ(grouped_tile(6, 3, 5, 1).m, 1);
  EXPECT_EQ(grouped_tile(6, 3, 5, 1).n, 1);
}

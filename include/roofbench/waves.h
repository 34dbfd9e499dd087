#pragma once
// What a fixed-tile GPU kernel tells the model about its grid (Instance::waves()).
#include <cstdint>

namespace roofbench {

// How a fixed-tile GPU kernel's grid fills the machine (wave quantization). A wave is every SM
// running its maximum of resident blocks at once; the last wave of a grid that is not a whole
// number of waves leaves SMs idle for the full time of a tile. The kernel states the facts (its
// tile, and the blocks per SM the occupancy calculator gives it on the device); the roofline
// model derives the rest (roofline/model.h: derive_waves), as it does on every load.
struct WaveModel {
  std::int64_t tile_m = 0, tile_n = 0;  // the block tile of C (BM x BN)
  std::int64_t blocks_per_sm = 0;       // resident at once (the occupancy calculator's answer)
  std::int64_t sms = 0;
  // Derived by the model:
  std::int64_t tiles = 0;  // blocks in the grid: ceil(M/BM) x ceil(N/BN)
  double waves = 0;        // tiles / (blocks_per_sm x sms)
  double efficiency = 0;   // tiles / (ceil(waves) x blocks_per_sm x sms): share of SM time doing useful tiles
};

}  // namespace roofbench

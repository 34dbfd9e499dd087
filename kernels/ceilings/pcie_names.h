#pragma once
// The names of the host-link ceilings, in one place: the ceilings register under them
// (gpu_pcie.cu) and the overlap kernels name them as their passes' and shared link's roofs
// (kernels/overlap/overlap.h). A pass that names a ceiling no kernel registers is left unplaced.
#include <string>

namespace roofbench::ceilings {

enum class Direction { to_device, from_device };
enum class HostMemory { pinned, pageable };

// "pcie_h2d_pinned", "pcie_d2h_pageable", ...
inline std::string pcie_ceiling_name(Direction d, HostMemory m) {
  return std::string("pcie_") + (d == Direction::to_device ? "h2d" : "d2h") + "_" +
         (m == HostMemory::pinned ? "pinned" : "pageable");
}

// Both directions at once from pinned memory: the roof of a pipeline's copies that share the link
// (Work::shared_link), never a level's roof.
inline constexpr const char* kPcieDuplexPinned = "pcie_duplex_pinned";

}  // namespace roofbench::ceilings

#include "roofline/datasheets.h"

#include <vector>

namespace roofbench {

namespace {

struct Sheet {
  const char* match;  // substring of the CUDA device name
  const char* source;
  double hbm_bytes_per_s;
  double fp32_flop_per_s;    // CUDA-core FMA
  double fp64_flop_per_s;    // CUDA-core FMA (not tensor)
  double fp16_tensor_dense;  // FP16/BF16 tensor, dense (no sparsity)
};

// Order matters: the first match wins, so the more specific names come first.
const std::vector<Sheet>& sheets() {
  static const std::vector<Sheet> s = {
      {"H200", "NVIDIA H200 Tensor Core GPU datasheet (SXM)", 4.8e12, 67e12, 34e12, 989.5e12},
      {"H100 PCIe", "NVIDIA H100 Tensor Core GPU datasheet (PCIe)", 2.0e12, 51e12, 26e12, 756.5e12},
      {"H100 NVL", "NVIDIA H100 Tensor Core GPU datasheet (NVL)", 3.9e12, 60e12, 30e12, 835.5e12},
      {"H100", "NVIDIA H100 Tensor Core GPU datasheet (SXM)", 3.35e12, 67e12, 34e12, 989.5e12},
      {"A100-SXM4-40GB", "NVIDIA A100 Tensor Core GPU datasheet (SXM 40GB)", 1.555e12, 19.5e12, 9.7e12, 312e12},
      {"A100-PCIE-40GB", "NVIDIA A100 Tensor Core GPU datasheet (PCIe 40GB)", 1.555e12, 19.5e12, 9.7e12, 312e12},
      {"A100 80GB PCIe", "NVIDIA A100 Tensor Core GPU datasheet (PCIe 80GB)", 1.935e12, 19.5e12, 9.7e12, 312e12},
      {"A100", "NVIDIA A100 Tensor Core GPU datasheet (SXM 80GB)", 2.039e12, 19.5e12, 9.7e12, 312e12},
  };
  return s;
}

}  // namespace

std::optional<ReferenceValue> datasheet_value(const std::string& device_name, const Ceiling& c) {
  for (const auto& s : sheets()) {
    if (device_name.find(s.match) == std::string::npos) continue;
    double v = 0;
    if (c.kind == CeilingKind::bandwidth && c.level == Level::dram) v = s.hbm_bytes_per_s;
    if (c.kind == CeilingKind::compute && c.precision && c.unit == Unit::simt) {
      if (*c.precision == Precision::fp32) v = s.fp32_flop_per_s;
      if (*c.precision == Precision::fp64) v = s.fp64_flop_per_s;
    }
    if (c.kind == CeilingKind::compute && c.precision && c.unit == Unit::tensor &&
        (*c.precision == Precision::fp16 || *c.precision == Precision::bf16))
      v = s.fp16_tensor_dense;
    if (v <= 0) return std::nullopt;
    return ReferenceValue{v, s.source};
  }
  return std::nullopt;
}

}  // namespace roofbench

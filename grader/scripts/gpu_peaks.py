"""gpu_peaks.py — the GPU's arithmetic and memory peaks, for the roofline: the lab report's figure
(report/report_data.py gpu_peaks) and make profile's placement of a profiled kernel (ncu_profile.py).

  peak GFLOPS = SMs × FMA lanes per SM × 2 flops × SM clock;  bandwidth: the vendor's datasheet

(The judge's own ceiling of a timing, grader/src/common/peak.cpp, is C++ and counts the FP64 tensor
cores and the tensor cores' FP16 rate; the lanes here are the same CUDA-core lanes.)
"""

# FP32 and FP64 FMA lanes per SM by compute capability (CUDA C Programming Guide, "Arithmetic
# Instructions" throughput table). Peak = SMs × lanes × 2 flops × max SM clock.
FMA_LANES_PER_SM = {
    "7.0": (64, 32), "7.5": (64, 2), "8.0": (64, 32), "8.6": (128, 2), "8.7": (128, 2),
    "8.9": (128, 2), "9.0": (128, 64), "10.0": (128, 64), "12.0": (128, 2),
}
# FP64 tensor cores (DMMA) double the FP64 peak on these; cuBLAS DGEMM uses them.
FP64_TENSOR_FACTOR = {"8.0": 2.0, "9.0": 2.0, "10.0": 1.0}
# DRAM bandwidth in GB/s from the vendors' datasheets, by (a substring of) the name CUDA reports.
# Longer names are tried first. course.toml [report.gpu_peaks."<name>"] bandwidth_gbs overrides.
DATASHEET_BANDWIDTH_GBS = {
    "H200": 4800, "H100 NVL": 3900, "H100 PCIe": 2000, "H100": 3350, "GH200": 4000,
    "A100-SXM4-80GB": 2039, "A100 80GB PCIe": 1935, "A100": 1555, "L40S": 864, "L4": 300,
    "RTX 4090": 1008, "V100": 900, "B200": 8000,
}


def bandwidth_gbs(name):
    """(GB/s, the datasheet's key) of a GPU by the name CUDA reports, or (None, None)."""
    for key in sorted(DATASHEET_BANDWIDTH_GBS, key=len, reverse=True):
        if key in (name or ""):
            return float(DATASHEET_BANDWIDTH_GBS[key]), key
    return None, None


def fma_peak_gflops(cc, sms, clock_mhz, precision):
    """The CUDA cores' FMA peak in GFLOPS for compute capability "9.0", or None where unknown."""
    if cc not in FMA_LANES_PER_SM or not sms or not clock_mhz:
        return None
    lanes = FMA_LANES_PER_SM[cc][0 if precision == "float" else 1]
    return sms * lanes * 2 * clock_mhz / 1000.0

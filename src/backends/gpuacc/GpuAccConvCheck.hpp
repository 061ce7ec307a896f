// GpuAcc: checking a convolution's result against GpuAcc's direct kernel, image by image.
//
// Every cuDNN convolution plan (and GpuAcc's own depthwise kernel) is checked at load on
// pseudo-random data before a region may use it (ConvTestData): each image of the batch is
// compared, not only the first and the last - an engine that is wrong on the images in between
// shows there. The same comparison (CheckConvOutput) also runs on a region's real tensors under
// the CheckConvs option.
#pragma once

#include "GpuAccConv.hpp"
#include "GpuAccDevice.hpp"
#include "GpuAccPrecision.hpp"
#include "kernels/GpuAccKernels.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trellis::gpuacc {

/// The relative L2 error a convolution may have against the direct kernel, per image: what its
/// precision costs on one layer, no more.
double ConvTolerance(Precision p);

ConvAct ToConvAct(Activation a);

/// The worst image of a check.
struct ConvCheckResult {
    double m_Error = 0.0;   ///< that image's relative L2 error (infinite where a NaN appeared)
    int64_t m_Image = 0;    ///< which image
    int64_t m_Checked = 0;  ///< how many images were compared
    /// What was written outside the output and workspace ("" if nothing; ConvTestData only).
    std::string m_Outside;
    bool Passes(double tolerance) const { return m_Error <= tolerance && m_Outside.empty(); }
    std::string ToString(int64_t images) const;
};

/// The direct kernel's launch for `s` in `type` (x, y in s's layout), pointers left unset.
DirectConvLaunch DirectConvFor(const ConvShape& s, DType type);

/// Compares y (computed from x with the epilogue `fused`: bias, residual z, activation) with the
/// direct kernel on weights w (KCRS, `type`) and bias (F32; may be null when not fused) followed
/// by the fused residual and activation - every image, or the first, second, middle and last where
/// the direct kernel would take long. `ref` (F32, y's element count) and `sums` (2 * N doubles)
/// are device scratch. Waits for `stream`.
ConvCheckResult CheckConvOutput(const ConvShape& s, DType type, const ConvEpilogue& fused, const void* x,
                                const void* w, const float* bias, const void* z, const void* y, float* ref,
                                double* sums, cudaStream_t stream);

/// Pseudo-random data for one convolution (inputs non-negative with a non-zero mean, as after a
/// ReLU: transform-based engines lose far more precision on such data than on zero-mean noise),
/// its weights and bias on the device, and the buffers a check needs.
///
/// The check also stands in for what a region's scratch memory looks like to a plan: the input,
/// residual, output and workspace each lie between guard bytes of all ones (NaN in every float
/// type), and the output and workspace start out filled with them too, as a region's buffers hold
/// another tensor's stale data. A plan that reads outside its inputs or relies on what its output
/// or workspace held before (NaN reaches its result) or that writes outside its output or
/// workspace (a guard changed) fails the check - on the device, a region's tensors lie next to
/// each other in one arena, so such a plan would corrupt or read its neighbours there.
class ConvTestData {
public:
    using Run = std::function<void(const void* x, const void* z, void* y, void* workspace)>;
    ConvTestData(const ConvShape& s, DType type, const std::vector<float>& wKcrs, const std::vector<float>& bias,
                 cudaStream_t stream);
    /// Runs `run` once on this data and checks its output and the guards.
    ConvCheckResult Check(const Run& run, const ConvEpilogue& fused, std::size_t workspaceBytes);
    /// The mean time of `run` in ms over a few launches after a warm-up.
    float TimeMs(const Run& run, std::size_t workspaceBytes);
    /// `values` on the device as `type` (weights in a layout a plan or kernel wants).
    static DeviceBuffer Upload(const std::vector<float>& values, DType type);
    const float* FloatBias() const { return static_cast<const float*>(m_Bias.Get()); }

    /// A device buffer between two guards (see above).
    struct Guarded {
        DeviceBuffer m_All;
        std::size_t m_Bytes = 0;
        void Allocate(std::size_t bytes, cudaStream_t stream);
        void* Get() const;
        /// Sets both guards again (after a plan that wrote into them).
        void ResetGuards(cudaStream_t stream) const;
        /// Where a guard was written: "" if nowhere, else "before" / "after" (and both).
        std::string Written() const;
    };

private:
    ConvShape m_Shape;
    DType m_Type;
    cudaStream_t m_Stream;
    Guarded m_X, m_Z, m_Y, m_Ws;
    DeviceBuffer m_Ref, m_Sums, m_W, m_Bias;
};

}  // namespace trellis::gpuacc

// Artifact support code of the onednn target: running a configured oneDNN primitive without
// allocating, describing strided views, packing weights, and the one element-wise kernel oneDNN
// lacks (erf). Emitted verbatim into onednn-target artifacts (the rules of the kernel snippets
// apply: see src/backends/reference/kernels/KernelSnippets.md).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace trellis::artifact {

/// Runs `primitive` with its arguments (prepared once, in the constructor) through oneDNN's C API:
/// the C++ execute() builds a map of the arguments on every call. Throws std::runtime_error naming
/// `layer` on failure.
inline void Execute(const dnnl::primitive& primitive, const dnnl::stream& stream, const std::vector<dnnl_exec_arg_t>& args,
                    const char* layer) {
    const dnnl_status_t status =
        dnnl_primitive_execute(primitive.get(), stream.get(), static_cast<int>(args.size()), args.data());
    if (status != dnnl_success) {
        throw std::runtime_error(std::string("oneDNN failed running layer '") + layer + "' (status " +
                                 std::to_string(static_cast<int>(status)) + ")");
    }
}

/// A plain strided layout starting `offset` elements into its buffer (a slice of a larger tensor).
inline dnnl::memory::desc StridedDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type type,
                                      const dnnl::memory::dims& strides, dnnl::memory::dim offset) {
    dnnl::memory::desc md(dims, type, strides);
    md.data.offset0 = offset;
    return md;
}

/// Reorders weights from the weights file (layout `from`, at `data`) into `to` (the layout the
/// layer was configured with), multiplied by `scale` where it is not 1.
inline void PackWeights(const dnnl::engine& engine, dnnl::stream& stream, const dnnl::memory::desc& from,
                        const void* data, const dnnl::memory& to, float scale) {
    dnnl::memory source(from, engine, const_cast<void*>(data));  // read only
    dnnl::memory target = to;                                     // the same memory object
    dnnl::primitive_attr attr;
    if (scale != 1.0f) attr.set_output_scales(0, {scale});
    const dnnl::reorder::primitive_desc pd(engine, from, engine, to.get_desc(), attr);
    dnnl::reorder(pd).execute(stream, source, target);
    stream.wait();
}

/// out[i] = erf(in[i]) for n floats (oneDNN has no erf; GELU's erf is fused into its eltwise).
inline void Erf(const float* in, float* out, std::size_t n) {
    const long long count = static_cast<long long>(n);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (count > 16384)
#endif
    for (long long i = 0; i < count; ++i) out[i] = std::erf(in[i]);
}

}  // namespace trellis::artifact

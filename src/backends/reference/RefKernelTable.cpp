#include "RefKernelTable.hpp"

namespace trellis::ref {

namespace {
const RefKernelRow kRows[] = {
#define TRELLIS_REF_KERNEL(Name) {LayerType::Name, &Name##RefSupport, &Name##RefCreate},
#include "RefKernels.def"
#undef TRELLIS_REF_KERNEL
};
}  // namespace

const RefKernelRow* FindRefKernel(LayerType type) {
    for (const RefKernelRow& row : kRows) {
        if (row.m_Type == type) return &row;
    }
    return nullptr;
}

}  // namespace trellis::ref

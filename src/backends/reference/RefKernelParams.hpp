// CpuRef: the parameters of each kernel snippet (kernels/, see kernels/KernelSnippets.md),
// computed from a layer's descriptor and tensor infos. CpuRef's workloads build them once at
// creation; the code generator's soft target calls the same functions at generation time and
// prints the result into the artifact, so both run the same kernel with the same parameters. Each
// function expects a layer its op's <Op>RefSupport() accepted.
#pragma once

#include "kernels/BatchNormalization.hpp"
#include "kernels/Convolution.hpp"
#include "kernels/DataMovement.hpp"
#include "kernels/ElementwiseBinary.hpp"
#include "kernels/ElementwiseUnary.hpp"
#include "kernels/GemmOp.hpp"
#include "kernels/LayerNormalization.hpp"
#include "kernels/MatMul.hpp"
#include "kernels/Pooling.hpp"
#include "kernels/Softmax.hpp"
#include "kernels/Where.hpp"

#include <trellis/backends/IWorkload.hpp>

namespace trellis::ref {

kernels::BatchNormalizationParams BatchNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::MultiCopy ConcatRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::ConvParams ConvolutionRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::BroadcastPlan<2> ElementwiseBinaryRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::UnaryParams ElementwiseUnaryRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::StridedCopy ExpandRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::GemmParams GemmRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::LayerNormalizationParams LayerNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::MatMulParams MatMulRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::PoolingParams PoolingRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::BroadcastPlan<2> PReluRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::OffsetCopy SliceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::SoftmaxParams SoftmaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::MultiCopy SplitRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::StridedCopy TransposeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::WhereParams WhereRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);

}  // namespace trellis::ref

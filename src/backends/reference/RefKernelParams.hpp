// CpuRef: the parameters of each kernel snippet (kernels/, see kernels/KernelSnippets.md),
// computed from a layer's descriptor and tensor infos. CpuRef's workloads build them once at
// creation; the code generator's soft target calls the same functions at generation time and
// prints the result into the artifact, so both run the same kernel with the same parameters. Each
// function expects a layer its op's <Op>RefSupport() accepted.
#pragma once

#include "kernels/ArgMinMax.hpp"
#include "kernels/BatchNormalization.hpp"
#include "kernels/Broadcast.hpp"
#include "kernels/Common.hpp"
#include "kernels/Convert.hpp"
#include "kernels/Convolution.hpp"
#include "kernels/ConvolutionTranspose.hpp"
#include "kernels/CumSum.hpp"
#include "kernels/DataMovement.hpp"
#include "kernels/Det.hpp"
#include "kernels/Einsum.hpp"
#include "kernels/ElementwiseBinary.hpp"
#include "kernels/ElementwiseUnary.hpp"
#include "kernels/Gather.hpp"
#include "kernels/GatherElements.hpp"
#include "kernels/GatherND.hpp"
#include "kernels/Gemm.hpp"
#include "kernels/GemmOp.hpp"
#include "kernels/GridSample.hpp"
#include "kernels/Hardmax.hpp"
#include "kernels/IndexOps.hpp"
#include "kernels/LayerNormalization.hpp"
#include "kernels/MatMul.hpp"
#include "kernels/NegativeLogLikelihoodLoss.hpp"
#include "kernels/Normalization.hpp"
#include "kernels/PRelu.hpp"
#include "kernels/Pad.hpp"
#include "kernels/Pooling.hpp"
#include "kernels/Recurrent.hpp"
#include "kernels/Reduce.hpp"
#include "kernels/Resize.hpp"
#include "kernels/RoiAlign.hpp"
#include "kernels/Selection.hpp"
#include "kernels/Softmax.hpp"
#include "kernels/SpaceDepth.hpp"
#include "kernels/Spectral.hpp"
#include "kernels/StridedCopy.hpp"
#include "kernels/Tile.hpp"
#include "kernels/Trilu.hpp"
#include "kernels/Where.hpp"

#include <trellis/backends/IWorkload.hpp>

namespace trellis::ref {

kernels::ArgMinMaxParams ArgMinMaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::BatchNormalizationParams BatchNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::BroadcastPlan<2> ElementwiseBinaryRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::BroadcastPlan<2> PReluRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::CastParams CastRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::CompressParams CompressRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::ConvParams ConvolutionRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::ConvParams ConvolutionTransposeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::CumSumParams CumSumRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::DetParams DetRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::DftParams DftRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::EinsumParams EinsumRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::ElementsParams GatherElementsRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::ElementsParams ScatterElementsRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::EyeLikeParams EyeLikeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::GatherParams GatherRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::GemmParams GemmRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::GridSampleParams GridSampleRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::HardmaxParams HardmaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::InstanceNormalizationParams InstanceNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::LayerNormalizationParams LayerNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::LrnParams LrnRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::MatMulParams MatMulRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::MaxUnpoolParams MaxUnpoolRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::MeanVarianceNormalizationParams MeanVarianceNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::MultiCopy ConcatRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::MultiCopy SplitRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::NllLossParams NegativeLogLikelihoodLossRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::OffsetCopy SliceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::OneHotParams OneHotRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::PadParams PadRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::PoolingParams PoolingRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::RecurrentParams RecurrentRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::ReduceParams ReduceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::ResizeParams ResizeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::ReverseSequenceParams ReverseSequenceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::RoiAlignParams RoiAlignRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::SizeParams SizeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::SoftmaxParams SoftmaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::SpaceDepthParams DepthToSpaceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::SpaceDepthParams SpaceToDepthRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::StftParams StftRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::StridedCopy ExpandRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::StridedCopy TransposeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::TileParams TileRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::TopKParams TopKRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::TriluParams TriluRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::TupleParams GatherNDRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::TupleParams ScatterNDRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::UnaryParams ElementwiseUnaryRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);
kernels::WhereParams WhereRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);

}  // namespace trellis::ref

// Internal: phase 7 of Optimize() - memory at backend boundaries.
//
// Every tensor lives in the working memory of the backend whose layer produced it (network
// inputs, outputs and constants in host memory). Where a consumer's backend cannot import the
// producer's memory source (IBackendInternal::GetImportFlags), a MemCopy layer is inserted, run by
// the side that owns the non-host memory; its output lives in the consumer's memory. Where it can,
// the consumer reads the producer's memory directly (zero-copy import).
#pragma once

#include "Graph.hpp"

#include <string>
#include <vector>

namespace trellis {
class IDeviceSpec;
}

namespace trellis::core {

void InsertBackendBoundaryCopies(Graph& graph, const IDeviceSpec* spec, std::vector<std::string>& log);

/// The backend whose memory holds the output of `layer` (empty = host memory): the layer's own
/// backend, or for a MemCopy layer the backend it copies into.
BackendId GetOutputMemoryOwner(const Layer& layer);

}  // namespace trellis::core

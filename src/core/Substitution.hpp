// Internal: phase 6 of Optimize() - applying a backend's sub-graph substitutions.
//
// A backend's OptimizeSubgraph() may answer with SubstitutionPairs: a part of the sub-graph it was
// given (the substitutable sub-graph, layers of the graph being optimized) and a replacement built
// from layers it created in OptimizationViews::GetINetwork(). Applying a pair:
//   - checks both views: every layer and slot belongs where it must, the substitutable view's
//     input slots are exactly the slots its layers read from outside it and its output slots
//     include every output read outside it; every input slot of a replacement layer is either a
//     boundary input of the replacement or fed by another replacement layer; the boundaries have
//     equal counts; every replacement output has a tensor info and boundary outputs match the
//     infos of the outputs they replace,
//   - copies the replacement layers into the graph (type, descriptor - a PreCompiled layer's
//     backend-owned object is shared, not copied - name, output infos), assigned to the backend,
//     keeping the replacement's internal connections,
//   - connects boundary input k of the replacement to the producer that fed substitutable input
//     slot k, and moves the outside readers of substitutable output k to replacement output k,
//   - erases the substituted layers and asks the backend's layer support about the new ones.
// Every error is a BackendUnavailableException naming the backend and the rule it broke.
#pragma once

#include "Graph.hpp"

#include <trellis/backends/ILayerSupport.hpp>
#include <trellis/backends/OptimizationViews.hpp>

#include <string>
#include <vector>

namespace trellis::core {

/// Applies every substitution in `views` (returned by `backend`'s OptimizeSubgraph) to `graph`,
/// appending one log line per substitution. `support` is the backend's layer support.
void ApplySubstitutions(Graph& graph, const BackendId& backend, const ILayerSupport& support,
                        OptimizationViews& views, std::vector<std::string>& log);

}  // namespace trellis::core

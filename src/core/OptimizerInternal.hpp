// Internal: pieces of Optimize() shared between its phases' files.
#pragma once

#include "Graph.hpp"

#include <trellis/backends/ILayerSupport.hpp>

#include <string>
#include <vector>

namespace trellis::core {

/// A preferred backend and its layer support (the backend object itself is not kept).
struct BackendHandles {
    BackendId m_Id;
    ILayerSupportSharedPtr m_Support;
};

/// Evaluates a layer whose inputs are all constant on the first preferred backend that supports
/// it and replaces it with Constant layers; returns false (layer left in place) if none does.
bool FoldLayer(Graph& graph, Layer& layer, const std::vector<BackendHandles>& backends, std::vector<std::string>& log);

/// One step of unrolling Loop layer `loop` when phase 3's sweep reaches it (LoopUnrolling.cpp):
/// validates it and reads its trip count and condition (ParameterNotConstant when either is not a
/// constant then). While the loop goes on, appends one iteration of the body's layers and feeds
/// the loop layer from that iteration's outputs; when it is done, replaces the loop layer with its
/// results (and erases it). Returns the layers to infer next, in topological order: the
/// iteration's layers followed by `loop` itself, or the layers that stack the scan outputs.
/// Throws LayerValidationException past kMaxLoopIterations iterations.
std::vector<Layer*> UnrollLoopStep(Graph& graph, Layer& loop, std::vector<std::string>& log);

/// Tries backends[first..] in order; assigns the first that accepts (recording the reasons of
/// those that decline). Returns false if none does.
bool AssignLayer(Layer& layer, const std::vector<BackendHandles>& backends, std::size_t first);

/// Phase 5b: layers whose backend supports them in Float16 are switched to Float16; Float32
/// constants they read are converted (folded Casts), and Cast layers are inserted where Float32
/// and Float16 layers meet (network inputs and outputs stay Float32).
void ReduceFp32ToFp16(Graph& graph, const std::vector<BackendHandles>& backends, std::vector<std::string>& log);

/// Phase 6b: a Debug layer after every output of every layer (and of every folded constant),
/// writing the tensor to `folder` (when not empty) and calling `callback` (when set).
void InsertDebugLayers(Graph& graph, const std::vector<BackendHandles>& backends, const std::string& folder,
                       const DebugCallback& callback, std::vector<std::string>& log);

}  // namespace trellis::core

// Phase 3's Loop unrolling (see UnrollLoopStep in OptimizerInternal.hpp).
//
// A Loop layer stays in the graph while it is unrolled: each step copies the body's layers once
// more (named "<loop>/<iteration>/<body layer>"), feeds them the iteration number (a constant),
// the condition, the loop-carried values and the outer values the loop layer reads, and then
// reconnects the loop layer's condition and loop-carried inputs to that iteration's outputs and
// appends its scan values as new inputs. The sweep infers (and folds) the copied layers before it
// comes back to the loop layer, so the next condition is known (a constant, or a value behind
// graph inputs that the runtime then pins) when the next step decides whether to go on.
//
// When the loop is done (the trip count reached, or the condition false), its loop-carried
// outputs are read from the values its inputs hold, each scan output becomes the Concat along a
// new first axis of its per-iteration values (each unsqueezed), and the loop layer is erased.
#include "InferContext.hpp"
#include "Network.hpp"
#include "OptimizerInternal.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>
#include <map>
#include <unordered_map>

namespace trellis::core {

namespace {

Layer* AddScalarConstant(Graph& graph, const std::string& name, DataType type, const void* value) {
    const TensorInfo info(TensorShape(std::vector<unsigned int>{}), type);
    const auto* bytes = static_cast<const uint8_t*>(value);
    Layer* c = graph.AddLayer(LayerType::Constant,
                              MakeOwnedConstant(info, std::vector<uint8_t>(bytes, bytes + GetDataTypeSize(type))), name,
                              0, 1);
    c->m_Synthesized = true;
    c->Output(0).SetTensorInfo(c->Desc<ConstantDescriptor>().m_Tensor.GetInfo());
    return c;
}

void Reconnect(InputSlot& input, OutputSlot& source) {
    if (OutputSlot* old = input.GetConnectedOutputSlot()) old->Disconnect(input);
    source.Connect(input);
}

const Graph& BodyGraph(const Layer& loop) {
    const auto* body = dynamic_cast<const NetworkImpl*>(loop.Desc<LoopDescriptor>().m_Body.get());
    if (!body) throw LayerValidationException(Describe(loop) + ": its body is not a network built by Trellis");
    return body->GetGraph();
}

// Copies the body's layers into `graph` for iteration `iteration`, reading `sources` for the
// body's inputs (by binding id). Returns the copies (in the body's topological order) and sets
// `results` to the slots that carry the body's outputs (by binding id).
std::vector<Layer*> CopyBody(Graph& graph, const Layer& loop, unsigned int iteration,
                             const std::map<LayerBindingId, OutputSlot*>& sources,
                             std::map<LayerBindingId, OutputSlot*>& results) {
    const Graph& body = BodyGraph(loop);
    const std::string prefix = loop.Name() + "/" + std::to_string(iteration) + "/";
    std::unordered_map<const Layer*, Layer*> copies;
    auto slotFor = [&](const InputSlot& in) -> OutputSlot& {
        const OutputSlot* src = in.GetConnectedOutputSlot();
        if (!src) {
            throw LayerValidationException(Describe(loop) + ": input " + std::to_string(in.GetSlotIndex()) +
                                           " of body layer " + Describe(in.GetOwningLayer()) + " is not connected");
        }
        const Layer& producer = src->GetOwningLayer();
        if (producer.GetType() == LayerType::Input) {
            const LayerBindingId id = producer.Desc<BindingDescriptor>().m_BindingId;
            auto it = sources.find(id);
            if (it == sources.end()) {
                throw LayerValidationException(Describe(loop) + ": body input " + Describe(producer) + " has binding " +
                                               std::to_string(id) + ", which the loop does not provide");
            }
            return *it->second;
        }
        return copies.at(&producer)->Output(src->CalculateIndexOnOwner());
    };
    std::vector<Layer*> added;
    for (Layer* b : body.TopologicalOrder()) {
        if (b->GetType() == LayerType::Input) continue;
        if (b->GetType() == LayerType::Output) {
            results[b->Desc<BindingDescriptor>().m_BindingId] = &slotFor(b->Input(0));
            continue;
        }
        Layer* c = graph.AddLayer(b->GetType(), b->GetDescriptor(), prefix + b->Name(), b->GetNumInputSlots(),
                                  b->GetNumOutputSlots());
        for (unsigned int o = 0; o < b->GetNumOutputSlots(); ++o) {
            if (b->Output(o).IsTensorInfoSet()) c->Output(o).SetTensorInfo(b->Output(o).GetTensorInfo());
        }
        for (unsigned int i = 0; i < b->GetNumInputSlots(); ++i) slotFor(b->Input(i)).Connect(c->Input(i));
        copies[b] = c;
        added.push_back(c);
    }
    return added;
}

// Replaces the finished loop layer with its results (see the top of the file).
std::vector<Layer*> FinishLoop(Graph& graph, Layer& loop, std::vector<std::string>& log) {
    const LoopDescriptor d = loop.Desc<LoopDescriptor>();
    for (unsigned int j = 0; j < d.m_NumCarried; ++j) {
        loop.Output(j).MoveAllConnections(*loop.Input(2 + j).GetConnectedOutputSlot());
    }
    std::vector<Layer*> added;
    const unsigned int firstScan = 2 + d.m_NumCarried + d.m_NumOuterValues;
    for (unsigned int k = 0; k < d.m_NumScanOutputs; ++k) {
        OutputSlot& output = loop.Output(d.m_NumCarried + k);
        if (output.GetNumConnections() == 0) continue;
        if (d.m_IterationsUnrolled == 0) {
            throw LayerValidationException(
                Describe(loop) + ": scan output " + std::to_string(k) + " is used, but the loop runs no iteration, so "
                "its shape (0 x the body's scan value) is unknown: Trellis infers shapes from the unrolled "
                "iterations");
        }
        const std::string name = loop.Name() + "/scan_output_" + std::to_string(k);
        ReshapeDescriptor unsqueeze;
        unsqueeze.m_Mode = ReshapeMode::Unsqueeze;
        unsqueeze.m_Axes = {0};
        std::vector<OutputSlot*> stacked;
        for (unsigned int i = 0; i < d.m_IterationsUnrolled; ++i) {
            OutputSlot& value = *loop.Input(firstScan + i * d.m_NumScanOutputs + k).GetConnectedOutputSlot();
            Layer* u = graph.AddLayer(LayerType::Reshape, unsqueeze, name + "/" + std::to_string(i), 1, 1);
            value.Connect(u->Input(0));
            added.push_back(u);
            stacked.push_back(&u->Output(0));
        }
        OutputSlot* result = stacked[0];
        if (stacked.size() > 1) {
            Layer* concat = graph.AddLayer(LayerType::Concat, ConcatDescriptor{0}, name,
                                           static_cast<unsigned int>(stacked.size()), 1);
            for (unsigned int i = 0; i < stacked.size(); ++i) stacked[i]->Connect(concat->Input(i));
            added.push_back(concat);
            result = &concat->Output(0);
        }
        output.MoveAllConnections(*result);
    }
    log.push_back("unrolled " + Describe(loop) + ": " + std::to_string(d.m_IterationsUnrolled) + " iterations");
    graph.EraseLayer(&loop);
    return added;
}

}  // namespace

std::vector<Layer*> UnrollLoopStep(Graph& graph, Layer& loop, std::vector<std::string>& log) {
    std::vector<TensorInfo> inputs;
    std::vector<const ConstTensor*> constants;
    for (unsigned int i = 0; i < loop.GetNumInputSlots(); ++i) {
        OutputSlot* s = loop.Input(i).GetConnectedOutputSlot();
        inputs.push_back(s->GetTensorInfo());
        Layer* src = &s->GetOwningLayer();
        constants.push_back(src->GetType() == LayerType::Constant ? &src->Desc<ConstantDescriptor>().m_Tensor : nullptr);
    }
    InferContext ctx(loop.GetType(), loop.Name(), loop.MutableDescriptor(), std::move(inputs), constants,
                     loop.GetNumOutputSlots());
    GetOpInfo(LayerType::Loop).m_Infer(ctx);  // validates; the trip count and condition are constants now

    auto& d = std::get<LoopDescriptor>(loop.MutableDescriptor());
    const bool hasTripCount = ctx.HasInput(0), hasCondition = ctx.HasInput(1);
    int64_t tripCount = 0;
    if (hasTripCount) std::memcpy(&tripCount, constants[0]->GetMemoryArea(), sizeof(tripCount));
    const bool condition = !hasCondition || *static_cast<const uint8_t*>(constants[1]->GetMemoryArea()) != 0;
    const unsigned int iteration = d.m_IterationsUnrolled;
    if ((hasTripCount && static_cast<int64_t>(iteration) >= tripCount) || !condition) return FinishLoop(graph, loop, log);
    if (iteration >= kMaxLoopIterations) {
        throw LayerValidationException(
            Describe(loop) + ": " + (hasTripCount ? "trip count " + std::to_string(tripCount) : std::string("the loop")) +
            " needs more than " + std::to_string(kMaxLoopIterations) + " iterations; Trellis unrolls a Loop while "
            "optimizing the network and stops at " + std::to_string(kMaxLoopIterations));
    }

    // The body's inputs: the iteration number, the condition (true when the loop has none: ONNX
    // then ignores the body's condition output), the loop-carried values, the outer values.
    std::map<LayerBindingId, OutputSlot*> sources;
    const std::string prefix = loop.Name() + "/" + std::to_string(iteration) + "/";
    const int64_t iterationNumber = iteration;
    std::vector<Layer*> added{AddScalarConstant(graph, prefix + "iteration_num", DataType::Signed64, &iterationNumber)};
    sources[0] = &added.back()->Output(0);
    if (hasCondition) {
        sources[1] = loop.Input(1).GetConnectedOutputSlot();
    } else {
        const uint8_t alwaysTrue = 1;
        added.push_back(AddScalarConstant(graph, prefix + "condition", DataType::Boolean, &alwaysTrue));
        sources[1] = &added.back()->Output(0);
    }
    for (unsigned int j = 0; j < d.m_NumCarried + d.m_NumOuterValues; ++j) {
        sources[static_cast<LayerBindingId>(2 + j)] = loop.Input(2 + j).GetConnectedOutputSlot();
    }
    std::map<LayerBindingId, OutputSlot*> results;
    std::vector<Layer*> copies = CopyBody(graph, loop, iteration, sources, results);
    added.insert(added.end(), copies.begin(), copies.end());
    const unsigned int numResults = 1 + d.m_NumCarried + d.m_NumScanOutputs;
    for (unsigned int r = 0; r < numResults; ++r) {
        if (!results.count(static_cast<LayerBindingId>(r))) {
            throw LayerValidationException(Describe(loop) + ": the body has no output with binding " +
                                           std::to_string(r) + " (it needs " + std::to_string(numResults) +
                                           ": the condition, the loop-carried values, the scan values)");
        }
    }

    // The loop layer now continues from this iteration's results.
    if (hasCondition) Reconnect(loop.Input(1), *results[0]);
    for (unsigned int j = 0; j < d.m_NumCarried; ++j) Reconnect(loop.Input(2 + j), *results[1 + j]);
    for (unsigned int k = 0; k < d.m_NumScanOutputs; ++k) {
        results[1 + d.m_NumCarried + k]->Connect(loop.AddInputSlot());
    }
    ++d.m_IterationsUnrolled;
    added.push_back(&loop);
    return added;
}

}  // namespace trellis::core

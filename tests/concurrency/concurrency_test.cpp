// Many threads x one loaded network, on every registered backend: concurrent EnqueueWorkload
// calls on the same network; on a dynamic network (specialized per input shape, with a cache
// smaller than the shapes in flight, so specializations are built, shared and evicted while calls
// run on them); on a Loop specialized per trip count (one body network unrolled on several
// threads); LoadNetwork/UnloadNetwork from several threads while others run; and runtimes that
// load the Custom backend's file created and destroyed on several threads. Every output is
// compared bit for bit with a single-threaded run of the same inputs on the same backend.
// Profiling is on, so backends' profiling counters are updated from every thread.
//
// The backends are the registry's (never a hand-kept list); the runtime is created with the
// Custom sample backend's dynamic-backend directory, so Custom (its own memory, PreCompiled
// additions) is among them. Each backend is preferred first with CpuRef behind it for the layers
// it declines; the residual network is built so that every backend runs some of its layers.
//
// These tests carry the ctest label "concurrency"; `make tsan` runs them under ThreadSanitizer.
// TRELLIS_TEST_CPUACC_THREADS, when set, is CpuAcc's NumThreads (its OpenMP team per call).
#include "TestHelpers.hpp"

#include <trellis/backends/BackendRegistry.hpp>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <random>
#include <thread>

using namespace trellis;
using namespace trellis::test;

namespace {

IRuntime::CreationOptions RuntimeOptions(std::size_t maxSpecializations = 8) {
    IRuntime::CreationOptions options;
    options.m_DynamicBackendsPath = TRELLIS_CUSTOM_BACKEND_DIR;
    options.m_MaxSpecializations = maxSpecializations;
    options.m_ProfilingOptions.m_EnableProfiling = true;  // backends' counters are updated by every call
    if (const char* threads = std::getenv("TRELLIS_TEST_CPUACC_THREADS")) {
        options.m_BackendOptions["CpuAcc"]["NumThreads"] = threads;
    }
    return options;
}

/// Every registered backend that can run here (the runtime holding the dynamic ones must exist);
/// one whose device is missing (GpuAcc without a GPU) is left out with its reason printed.
std::vector<BackendId> RegisteredBackends() {
    std::vector<BackendId> ids;
    for (const BackendId& id : BackendRegistryInstance().GetBackendIds()) {
        if (std::string why; !BackendRegistryInstance().IsBackendAvailable(id, &why)) {
            std::cout << "left out: " << id << " is not available here: " << why << "\n";
            continue;
        }
        ids.push_back(id);
    }
    EXPECT_TRUE(std::find(ids.begin(), ids.end(), BackendId("Custom")) != ids.end())
        << "the Custom dynamic backend did not register from " << TRELLIS_CUSTOM_BACKEND_DIR;
    return ids;
}

std::vector<BackendId> Preferring(const BackendId& backend) {
    if (backend == BackendId("CpuRef")) return {backend};
    return {backend, "CpuRef"};
}

OwnedTensor RandomLike(const TensorInfo& info, unsigned int seed) {
    OwnedTensor t;
    t.m_Info = info;
    t.m_Data.resize(info.GetNumBytes());
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto* p = reinterpret_cast<float*>(t.m_Data.data());
    for (std::size_t i = 0; i < info.GetNumElements(); ++i) p[i] = dist(rng);
    return t;
}

/// Runs network `id` of `runtime` with `inputs` (bindings 0, 1, ... in order).
std::vector<OwnedTensor> RunOnce(IRuntime& runtime, NetworkId id, const std::vector<OwnedTensor>& inputs,
                             std::size_t numOutputs) {
    InputTensors in;
    for (std::size_t i = 0; i < inputs.size(); ++i) in.emplace_back(static_cast<LayerBindingId>(i), inputs[i].AsConstTensor());
    return RunNetwork(runtime, id, in, numOutputs);
}

/// `threads` threads, each calling `work(thread)`; returns the first error of each thread ("" when none).
std::vector<std::string> RunThreads(unsigned int threads, const std::function<void(unsigned int)>& work) {
    std::vector<std::string> errors(threads);
    std::vector<std::thread> pool;
    for (unsigned int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            try {
                work(t);
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    }
    for (auto& th : pool) th.join();
    return errors;
}

/// Single-threaded reference outputs for `inputs`, then `threads` threads each running every
/// input `rounds` times: every output must equal the reference bit for bit.
void ExpectSameResultsFromManyThreads(IRuntime& runtime, NetworkId id, const std::vector<std::vector<OwnedTensor>>& inputs,
                                      std::size_t numOutputs, unsigned int threads, unsigned int rounds,
                                      const std::string& what) {
    std::vector<std::vector<OwnedTensor>> expected;
    for (const auto& in : inputs) expected.push_back(RunOnce(runtime, id, in, numOutputs));
    const std::vector<std::string> errors = RunThreads(threads, [&](unsigned int t) {
        for (unsigned int round = 0; round < rounds; ++round) {
            for (std::size_t k = 0; k < inputs.size(); ++k) {
                const std::size_t i = (k + t) % inputs.size();  // threads start on different inputs
                const auto out = RunOnce(runtime, id, inputs[i], numOutputs);
                for (std::size_t o = 0; o < numOutputs; ++o) {
                    if (out[o].m_Info.GetShape() != expected[i][o].m_Info.GetShape() ||
                        out[o].m_Data != expected[i][o].m_Data) {
                        throw RuntimeException("thread " + std::to_string(t) + ", input set " + std::to_string(i) +
                                               ": output " + std::to_string(o) +
                                               " differs from the single-threaded run");
                    }
                }
            }
        }
    });
    for (unsigned int t = 0; t < threads; ++t) EXPECT_EQ(errors[t], "") << what << ", thread " << t;
}

/// Layers of `optimized` that run on `backend` (a dynamic network reports none before it runs).
unsigned int LayersOn(const IOptimizedNetwork& optimized, const BackendId& backend) {
    const auto counts = optimized.GetBackendLayerCounts();
    const auto it = counts.find(backend);
    return it == counts.end() ? 0u : it->second;
}

/// An ONNX model of tests/models, run by `threads` threads on every backend.
void ModelOnEveryBackend(const std::string& file, unsigned int threads, unsigned int inputSets, unsigned int rounds) {
    IRuntimePtr runtime = IRuntime::Create(RuntimeOptions());
    for (const BackendId& backend : RegisteredBackends()) {
        IOnnxParserPtr parser = IOnnxParser::Create();
        INetworkPtr network = parser->CreateNetworkFromBinaryFile(std::string(TRELLIS_TEST_MODELS_DIR) + "/" + file);
        ASSERT_EQ(parser->GetInputs().size(), 1u);
        IOptimizedNetworkPtr optimized = Optimize(*network, Preferring(backend), runtime->GetDeviceSpec());
        std::cout << "[ info ] " << file << ": " << LayersOn(*optimized, backend) << " layers on " << backend << "\n";
        NetworkId id = 0;
        ASSERT_EQ(runtime->LoadNetwork(id, std::move(optimized)), Status::Success);
        const TensorInfo info = runtime->GetInputTensorInfo(id, parser->GetInputs()[0].m_BindingId);
        std::vector<std::vector<OwnedTensor>> inputs;
        for (unsigned int i = 0; i < inputSets; ++i) inputs.push_back({RandomLike(info, 1000 + i)});
        ExpectSameResultsFromManyThreads(*runtime, id, inputs, parser->GetOutputs().size(), threads, rounds,
                                         file + " on " + backend.Get());
        runtime->UnloadNetwork(id);
    }
}

/// x [batch, 1024] -> y = Softmax(Relu(x + x) + x), z = y + y and w = Erf(x + x): additions
/// (which Custom runs, in its own memory, with copies at its boundaries), Relu, Softmax and Erf
/// (CpuAcc, CpuRef; CpuAcc runs a lone Erf on its own kernel, in blocks of 4096 elements over its
/// OpenMP team, so from batch 5 on code of Trellis runs on OpenMP's worker threads). batch 0 is an
/// unknown dim: the network is dynamic.
constexpr unsigned int kWidth = 1024;
INetworkPtr ResidualNetwork(unsigned int batch) {
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* x = net->AddInputLayer(0, "x");
    x->GetOutputSlot(0).SetTensorInfo(
        TensorInfo(TensorShape({batch == 0 ? kUnknownDim : batch, kWidth}), DataType::Float32));
    auto add = [&](IOutputSlot& a, IOutputSlot& b, const char* name) -> IOutputSlot& {
        IConnectableLayer* l = net->AddAdditionLayer(name);
        a.Connect(l->GetInputSlot(0));
        b.Connect(l->GetInputSlot(1));
        return l->GetOutputSlot(0);
    };
    IOutputSlot& doubled = add(x->GetOutputSlot(0), x->GetOutputSlot(0), "doubled");
    ElementwiseUnaryDescriptor relu;
    relu.m_Operation = UnaryOperation::Relu;
    IConnectableLayer* r = net->AddElementwiseUnaryLayer(relu, "relu");
    doubled.Connect(r->GetInputSlot(0));
    IOutputSlot& residual = add(r->GetOutputSlot(0), x->GetOutputSlot(0), "residual");
    IConnectableLayer* softmax = net->AddSoftmaxLayer(SoftmaxDescriptor{}, "softmax");
    residual.Connect(softmax->GetInputSlot(0));
    IOutputSlot& z = add(softmax->GetOutputSlot(0), softmax->GetOutputSlot(0), "twice");
    ElementwiseUnaryDescriptor erf;
    erf.m_Operation = UnaryOperation::Erf;
    IConnectableLayer* w = net->AddElementwiseUnaryLayer(erf, "erf");
    doubled.Connect(w->GetInputSlot(0));
    softmax->GetOutputSlot(0).Connect(net->AddOutputLayer(0, "y")->GetInputSlot(0));
    z.Connect(net->AddOutputLayer(1, "z")->GetInputSlot(0));
    w->GetOutputSlot(0).Connect(net->AddOutputLayer(2, "w")->GetInputSlot(0));
    return net;
}

/// Loop(M, v): v doubled M times (the body is one addition), every iteration's value scanned. M
/// is a graph input, so the network is specialized per trip count: specializations unroll the
/// same shared body network on several threads at once.
INetworkPtr DoublingLoopNetwork() {
    INetworkPtr body = INetwork::Create();
    body->AddInputLayer(0, "iteration");
    IConnectableLayer* cond = body->AddInputLayer(1, "cond_in");
    IConnectableLayer* v = body->AddInputLayer(2, "v_in");
    IConnectableLayer* add = body->AddAdditionLayer("v_next");
    v->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    v->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    cond->GetOutputSlot(0).Connect(body->AddOutputLayer(0)->GetInputSlot(0));
    add->GetOutputSlot(0).Connect(body->AddOutputLayer(1)->GetInputSlot(0));
    add->GetOutputSlot(0).Connect(body->AddOutputLayer(2)->GetInputSlot(0));
    LoopDescriptor d;
    d.m_Body = ShareNetwork(std::move(body));
    d.m_NumCarried = 1;
    d.m_NumScanOutputs = 1;

    INetworkPtr net = INetwork::Create();
    IConnectableLayer* m = net->AddInputLayer(0, "M");
    m->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape(std::vector<unsigned int>{}), DataType::Signed64));
    IConnectableLayer* v0 = net->AddInputLayer(1, "v0");
    v0->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({2, kWidth}), DataType::Float32));
    static const uint8_t none = 0;
    IConnectableLayer* noCondition = net->AddConstantLayer(
        ConstTensor(TensorInfo(TensorShape({0}), DataType::Boolean, 0.0f, 0, true), &none), "no_condition");
    IConnectableLayer* loop = net->AddLayer(LayerType::Loop, d, "doubling", 3, 2);
    m->GetOutputSlot(0).Connect(loop->GetInputSlot(0));
    noCondition->GetOutputSlot(0).Connect(loop->GetInputSlot(1));
    v0->GetOutputSlot(0).Connect(loop->GetInputSlot(2));
    loop->GetOutputSlot(0).Connect(net->AddOutputLayer(0, "v")->GetInputSlot(0));
    loop->GetOutputSlot(1).Connect(net->AddOutputLayer(1, "all")->GetInputSlot(0));
    return net;
}

}  // namespace

TEST(Concurrency, EveryBackendManyThreadsOnTinyCnn) {
    ModelOnEveryBackend("tiny_cnn_op13.onnx", 8, 4, 2);
}

TEST(Concurrency, EveryBackendManyThreadsOnTransformer) {
    ModelOnEveryBackend("transformer_op17.onnx", 6, 3, 2);
}

TEST(Concurrency, EveryBackendManyThreadsOnResidualNetwork) {
    IRuntimePtr runtime = IRuntime::Create(RuntimeOptions());
    INetworkPtr network = ResidualNetwork(6);  // 6144 elements: two blocks of CpuAcc's Erf kernel
    for (const BackendId& backend : RegisteredBackends()) {
        IOptimizedNetworkPtr optimized = Optimize(*network, Preferring(backend), runtime->GetDeviceSpec());
        EXPECT_GT(LayersOn(*optimized, backend), 0u) << backend << " must run some of the residual network's layers";
        NetworkId id = 0;
        ASSERT_EQ(runtime->LoadNetwork(id, std::move(optimized)), Status::Success);
        std::vector<std::vector<OwnedTensor>> inputs;
        for (unsigned int i = 0; i < 6; ++i) inputs.push_back({RandomLike(TensorInfo({6, kWidth}, DataType::Float32), i)});
        ExpectSameResultsFromManyThreads(*runtime, id, inputs, 3, 8, 4, "residual network on " + backend.Get());
        runtime->UnloadNetwork(id);
    }
}

TEST(Concurrency, EveryBackendDynamicNetworkWithMoreShapesThanTheCache) {
    // Five batch sizes in flight, three cache entries: specializations are built concurrently
    // (the same key by two threads, too), evicted while calls still run on them, and rebuilt.
    IRuntimePtr runtime = IRuntime::Create(RuntimeOptions(3));
    INetworkPtr network = ResidualNetwork(0);
    for (const BackendId& backend : RegisteredBackends()) {
        NetworkId id = 0;
        ASSERT_EQ(runtime->LoadNetwork(id, Optimize(*network, Preferring(backend), runtime->GetDeviceSpec())),
                  Status::Success);
        ASSERT_TRUE(runtime->IsDynamic(id));
        std::vector<std::vector<OwnedTensor>> inputs;
        for (unsigned int batch = 1; batch <= 5; ++batch) {
            inputs.push_back({RandomLike(TensorInfo({batch, kWidth}, DataType::Float32), batch)});
        }
        ExpectSameResultsFromManyThreads(*runtime, id, inputs, 3, 8, 3, "dynamic network on " + backend.Get());
        const auto stats = runtime->GetSpecializationStats(id);
        EXPECT_LE(stats.m_Cached, 3u);
        EXPECT_GT(stats.m_Evicted, 0u) << "five shapes through three cache entries must evict";
        runtime->UnloadNetwork(id);
    }
}

TEST(Concurrency, EveryBackendLoopSpecializedPerTripCount) {
    IRuntimePtr runtime = IRuntime::Create(RuntimeOptions(3));
    INetworkPtr network = DoublingLoopNetwork();
    for (const BackendId& backend : RegisteredBackends()) {
        NetworkId id = 0;
        ASSERT_EQ(runtime->LoadNetwork(id, Optimize(*network, Preferring(backend), runtime->GetDeviceSpec())),
                  Status::Success);
        ASSERT_TRUE(runtime->IsDynamic(id));
        std::vector<std::vector<OwnedTensor>> inputs;
        for (int64_t trips = 1; trips <= 4; ++trips) {
            inputs.push_back({MakeTensor(TensorShape(std::vector<unsigned int>{}), DataType::Signed64,
                                         std::vector<int64_t>{trips}),
                              RandomLike(TensorInfo({2, kWidth}, DataType::Float32), static_cast<unsigned int>(trips))});
        }
        ExpectSameResultsFromManyThreads(*runtime, id, inputs, 2, 6, 3, "loop on " + backend.Get());
        runtime->UnloadNetwork(id);
    }
}

TEST(Concurrency, EveryBackendLoadAndUnloadWhileOtherThreadsRun) {
    // Four threads run one long-lived network while four others each optimize, load, run and
    // unload their own copy of the same INetwork, over and over, in the same runtime.
    IRuntimePtr runtime = IRuntime::Create(RuntimeOptions());
    INetworkPtr network = ResidualNetwork(5);
    const std::vector<OwnedTensor> input{RandomLike(TensorInfo({5, kWidth}, DataType::Float32), 7)};
    for (const BackendId& backend : RegisteredBackends()) {
        NetworkId longLived = 0;
        ASSERT_EQ(runtime->LoadNetwork(longLived, Optimize(*network, Preferring(backend), runtime->GetDeviceSpec())),
                  Status::Success);
        const std::vector<OwnedTensor> want = RunOnce(*runtime, longLived, input, 3);
        const std::vector<std::string> errors = RunThreads(8, [&](unsigned int t) {
            for (unsigned int i = 0; i < 12; ++i) {
                NetworkId id = longLived;
                const bool own = t % 2 == 1;
                if (own) {
                    std::string error;
                    if (runtime->LoadNetwork(id, Optimize(*network, Preferring(backend), runtime->GetDeviceSpec()),
                                             error) != Status::Success) {
                        throw RuntimeException("LoadNetwork failed: " + error);
                    }
                }
                const auto got = RunOnce(*runtime, id, input, 3);
                if (own && runtime->UnloadNetwork(id) != Status::Success) throw RuntimeException("UnloadNetwork failed");
                for (std::size_t o = 0; o < want.size(); ++o) {
                    if (got[o].m_Data != want[o].m_Data) {
                        throw RuntimeException("iteration " + std::to_string(i) + ": output " + std::to_string(o) +
                                               (own ? " of a freshly loaded network" : "") +
                                               " differs from the single-threaded run");
                    }
                }
            }
        });
        for (unsigned int t = 0; t < errors.size(); ++t) EXPECT_EQ(errors[t], "") << backend << ", thread " << t;
        runtime->UnloadNetwork(longLived);
    }
}

TEST(Concurrency, RuntimesSharingTheCustomBackendFileOnManyThreads) {
    // Each thread creates its own runtime from the Custom backend's directory (the loaded file and
    // its registration are shared and counted), runs a network on Custom and destroys the runtime,
    // over and over, while the others do the same.
    INetworkPtr network = ResidualNetwork(2);
    const std::vector<OwnedTensor> input{RandomLike(TensorInfo({2, kWidth}, DataType::Float32), 3)};
    std::vector<OwnedTensor> want;
    {
        IRuntimePtr runtime = IRuntime::Create(RuntimeOptions());
        NetworkId id = 0;
        ASSERT_EQ(runtime->LoadNetwork(id, Optimize(*network, Preferring("Custom"), runtime->GetDeviceSpec())),
                  Status::Success);
        want = RunOnce(*runtime, id, input, 3);
    }
    const std::vector<std::string> errors = RunThreads(6, [&](unsigned int t) {
        for (unsigned int i = 0; i < 5; ++i) {
            IRuntimePtr runtime = IRuntime::Create(RuntimeOptions());
            IOptimizedNetworkPtr optimized = Optimize(*network, Preferring("Custom"), runtime->GetDeviceSpec());
            if (LayersOn(*optimized, "Custom") == 0) throw RuntimeException("no layer placed on Custom");
            NetworkId id = 0;
            if (runtime->LoadNetwork(id, std::move(optimized)) != Status::Success) {
                throw RuntimeException("LoadNetwork failed");
            }
            const auto got = RunOnce(*runtime, id, input, 3);
            for (std::size_t o = 0; o < want.size(); ++o) {
                if (got[o].m_Data != want[o].m_Data) {
                    throw RuntimeException("thread " + std::to_string(t) + ", iteration " + std::to_string(i) +
                                           ": output " + std::to_string(o) + " differs from the single-threaded run");
                }
            }
        }
    });
    for (unsigned int t = 0; t < errors.size(); ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

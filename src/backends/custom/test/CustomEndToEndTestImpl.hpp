// Custom backend end-to-end test bodies, shared by both forms of the backend:
// trellis_custom_linked_tests (linked in, static registration) and trellis_unit_tests
// (Sample_Custom_backend.so loaded through m_DynamicBackendsPath). Each body creates its runtime
// from the options it is given (profiling switched on, so the backend's counters can be read),
// and everything that holds Custom objects dies before that runtime does.
// Uses only the public API: no Custom internals, so the dynamic form can run it.
#pragma once

#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace trellis::custom::test {

inline IRuntimePtr CreateProfilingRuntime(IRuntime::CreationOptions options) {
    options.m_ProfilingOptions.m_EnableProfiling = true;
    return IRuntime::Create(options);
}

/// The value of counter "Custom/<name>" (a failure when the backend did not register it).
inline uint64_t CustomCounter(const IRuntime& runtime, const std::string& name) {
    const std::map<std::string, uint64_t> counters = runtime.GetProfilingCounters();
    auto it = counters.find("Custom/" + name);
    EXPECT_NE(it, counters.end()) << "no profiling counter Custom/" << name;
    return it == counters.end() ? 0 : it->second;
}

inline std::vector<LayerPlacement> PlacementsOfType(const IOptimizedNetwork& net, LayerType type) {
    std::vector<LayerPlacement> out;
    for (const LayerPlacement& p : net.GetLayerPlacements()) {
        if (p.m_Type == type) out.push_back(p);
    }
    return out;
}

inline const LayerPlacement* FindPlacement(const std::vector<LayerPlacement>& placements, const std::string& name) {
    for (const LayerPlacement& p : placements) {
        if (p.m_LayerName == name) return &p;
    }
    return nullptr;
}

inline unsigned int LogLinesContaining(const IOptimizedNetwork& net, const std::string& text) {
    unsigned int n = 0;
    for (const std::string& line : net.GetOptimizationLog()) n += line.find(text) != std::string::npos ? 1 : 0;
    return n;
}

/// The AdditionToPreCompiled flow of the custom-backend plugin guide (section 5), preferences
/// {"Custom"}: the addition becomes a PreCompiled layer on Custom, the inputs are copied into
/// Custom memory and the result out of it, and the memory manager and context are called.
inline void RunAdditionToPreCompiled(const IRuntime::CreationOptions& options) {
    IRuntimePtr runtime = CreateProfilingRuntime(options);
    ASSERT_TRUE(BackendRegistryInstance().IsBackendRegistered("Custom"))
        << "registered: " << BackendRegistryInstance().GetBackendIdsAsString();

    INetworkPtr net(INetwork::Create());
    IConnectableLayer* input1 = net->AddInputLayer(0);
    IConnectableLayer* input2 = net->AddInputLayer(1);
    IConnectableLayer* add = net->AddAdditionLayer("add");
    IConnectableLayer* output = net->AddOutputLayer(0);
    input1->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    input2->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(output->GetInputSlot(0));
    TensorInfo tensorInfo(TensorShape({3, 4}), DataType::Float32);
    input1->GetOutputSlot(0).SetTensorInfo(tensorInfo);
    input2->GetOutputSlot(0).SetTensorInfo(tensorInfo);
    add->GetOutputSlot(0).SetTensorInfo(tensorInfo);

    IOptimizedNetworkPtr optimizedNet = Optimize(*net, {"Custom"}, runtime->GetDeviceSpec());

    // Graph out: the addition is gone, one PreCompiled layer on Custom replaces it, and three
    // copies (two inputs in, the result out) run on Custom.
    EXPECT_TRUE(PlacementsOfType(*optimizedNet, LayerType::ElementwiseBinary).empty()) << optimizedNet->ToString();
    const auto preCompiled = PlacementsOfType(*optimizedNet, LayerType::PreCompiled);
    ASSERT_EQ(preCompiled.size(), 1u) << optimizedNet->ToString();
    EXPECT_EQ(preCompiled[0].m_LayerName, "add");
    EXPECT_EQ(preCompiled[0].m_Backend, BackendId("Custom"));
    EXPECT_EQ(preCompiled[0].m_OpDetail, "CustomPreCompiled(Add)");
    ASSERT_EQ(preCompiled[0].m_Outputs.size(), 1u);
    EXPECT_EQ(preCompiled[0].m_Outputs[0], tensorInfo);
    const auto copies = PlacementsOfType(*optimizedNet, LayerType::MemCopy);
    EXPECT_EQ(copies.size(), 3u) << optimizedNet->ToString();
    for (const LayerPlacement& c : copies) EXPECT_EQ(c.m_Backend, BackendId("Custom")) << c.m_LayerName;
    EXPECT_EQ(LogLinesContaining(*optimizedNet, "substituted Add 'add' on Custom with CustomPreCompiled(Add) 'add'"), 1u);
    EXPECT_EQ(LogLinesContaining(*optimizedNet, "inserted MemCopy"), 3u);
    EXPECT_EQ(CustomCounter(*runtime, "workloads_executed"), 0u);

    NetworkId networkId = 0;
    std::string error;
    ASSERT_EQ(runtime->LoadNetwork(networkId, std::move(optimizedNet), error), Status::Success) << error;
    EXPECT_EQ(CustomCounter(*runtime, "context_before_load"), 1u);
    EXPECT_EQ(CustomCounter(*runtime, "context_after_load"), 1u);
    EXPECT_EQ(CustomCounter(*runtime, "memory_acquires"), 1u);
    EXPECT_EQ(CustomCounter(*runtime, "memory_releases"), 0u);

    std::vector<float> input1Data{1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 10.f, 11.f, 12.f};
    std::vector<float> input2Data{100.f, 200.f, 300.f, 400.f, 500.f, 600.f, 700.f, 800.f, 900.f, 1000.f, 1100.f, 1200.f};
    std::vector<float> outputData(12);
    InputTensors inputTensors{{0, ConstTensor(runtime->GetInputTensorInfo(networkId, 0), input1Data.data())},
                              {1, ConstTensor(runtime->GetInputTensorInfo(networkId, 0), input2Data.data())}};
    OutputTensors outputTensors{{0, Tensor(runtime->GetOutputTensorInfo(networkId, 0), outputData.data())}};
    ASSERT_EQ(runtime->EnqueueWorkload(networkId, inputTensors, outputTensors), Status::Success);
    const std::vector<float> expected{101, 202, 303, 404, 505, 606, 707, 808, 909, 1010, 1111, 1212};
    EXPECT_EQ(outputData, expected);

    // One PreCompiled and three MemCopy workloads ran; 2 x 48 bytes went in, 48 came out; the
    // working memory came from the device pool in one block.
    EXPECT_EQ(CustomCounter(*runtime, "workloads_executed"), 4u);
    EXPECT_EQ(CustomCounter(*runtime, "bytes_copied_to_device"), 96u);
    EXPECT_EQ(CustomCounter(*runtime, "bytes_copied_to_host"), 48u);
    EXPECT_EQ(CustomCounter(*runtime, "device_allocations"), 1u);

    // A second run reuses the same device memory.
    std::fill(outputData.begin(), outputData.end(), 0.f);
    ASSERT_EQ(runtime->EnqueueWorkload(networkId, inputTensors, outputTensors), Status::Success);
    EXPECT_EQ(outputData, expected);
    EXPECT_EQ(CustomCounter(*runtime, "workloads_executed"), 8u);
    EXPECT_EQ(CustomCounter(*runtime, "device_allocations"), 1u);

    ASSERT_EQ(runtime->UnloadNetwork(networkId), Status::Success);
    EXPECT_EQ(CustomCounter(*runtime, "device_frees"), 1u);
    EXPECT_EQ(CustomCounter(*runtime, "memory_releases"), 1u);
    EXPECT_EQ(CustomCounter(*runtime, "context_before_unload"), 1u);
    EXPECT_EQ(CustomCounter(*runtime, "context_after_unload"), 1u);
}

/// The bias constant of BuildMixedNetwork().
inline std::vector<float> MixedNetworkBias() { return {0.5f, -1.f, 2.f}; }

/// x, y: Float32 2x3; a = x + y, r = relu(a), m = r * y, s = m + c (c: 3, broadcast);
/// outputs 0 = s, 1 = a.
inline INetworkPtr BuildMixedNetwork() {
    const TensorInfo info({2, 3}, DataType::Float32);
    const std::vector<float> c = MixedNetworkBias();
    INetworkPtr net(INetwork::Create());
    IConnectableLayer* x = net->AddInputLayer(0, "x");
    IConnectableLayer* y = net->AddInputLayer(1, "y");
    IConnectableLayer* bias = net->AddConstantLayer(ConstTensor(TensorInfo({3}, DataType::Float32), c.data()), "c");
    IConnectableLayer* addXy = net->AddAdditionLayer("add_xy");
    IConnectableLayer* relu = net->AddElementwiseUnaryLayer({UnaryOperation::Relu}, "relu");
    IConnectableLayer* mul = net->AddMultiplicationLayer("mul");
    IConnectableLayer* addBias = net->AddAdditionLayer("add_bias");
    IConnectableLayer* out0 = net->AddOutputLayer(0, "s");
    IConnectableLayer* out1 = net->AddOutputLayer(1, "a");
    x->GetOutputSlot(0).SetTensorInfo(info);
    y->GetOutputSlot(0).SetTensorInfo(info);
    x->GetOutputSlot(0).Connect(addXy->GetInputSlot(0));
    y->GetOutputSlot(0).Connect(addXy->GetInputSlot(1));
    addXy->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    relu->GetOutputSlot(0).Connect(mul->GetInputSlot(0));
    y->GetOutputSlot(0).Connect(mul->GetInputSlot(1));
    mul->GetOutputSlot(0).Connect(addBias->GetInputSlot(0));
    bias->GetOutputSlot(0).Connect(addBias->GetInputSlot(1));
    addBias->GetOutputSlot(0).Connect(out0->GetInputSlot(0));
    addXy->GetOutputSlot(0).Connect(out1->GetInputSlot(0));
    return net;
}

/// Additions mixed with ops Custom lacks (Relu, Mul), preferences {"Custom", "CpuRef"}: the
/// additions become PreCompiled layers on Custom, the rest falls back to CpuRef with Custom's
/// reason kept, and MemCopy layers move every tensor that crosses between the two memories.
///   a = x + y (Custom), r = relu(a), m = r * y (CpuRef), s = m + c (Custom, c broadcast)
///   outputs: 0 = s, 1 = a
inline void RunMixedNetworkWithFallback(const IRuntime::CreationOptions& options) {
    IRuntimePtr runtime = CreateProfilingRuntime(options);
    ASSERT_TRUE(BackendRegistryInstance().IsBackendRegistered("Custom"));

    const std::vector<float> c = MixedNetworkBias();
    INetworkPtr net = BuildMixedNetwork();

    IOptimizedNetworkPtr opt = Optimize(*net, {"Custom", "CpuRef"}, runtime->GetDeviceSpec());
    const std::vector<LayerPlacement> placements = opt->GetLayerPlacements();
    for (const char* name : {"add_xy", "add_bias"}) {
        const LayerPlacement* p = FindPlacement(placements, name);
        ASSERT_NE(p, nullptr) << name << "\n" << opt->ToString();
        EXPECT_EQ(p->m_Type, LayerType::PreCompiled) << name;
        EXPECT_EQ(p->m_Backend, BackendId("Custom")) << name;
    }
    const LayerPlacement* pRelu = FindPlacement(placements, "relu");
    const LayerPlacement* pMul = FindPlacement(placements, "mul");
    ASSERT_NE(pRelu, nullptr);
    ASSERT_NE(pMul, nullptr);
    EXPECT_EQ(pRelu->m_Backend, BackendId("CpuRef"));
    EXPECT_EQ(pMul->m_Backend, BackendId("CpuRef"));
    ASSERT_EQ(pMul->m_Declined.size(), 1u);
    EXPECT_EQ(pMul->m_Declined[0].first, BackendId("Custom"));
    EXPECT_NE(pMul->m_Declined[0].second.find("Mul"), std::string::npos) << pMul->m_Declined[0].second;
    ASSERT_EQ(pRelu->m_Declined.size(), 1u);
    EXPECT_NE(pRelu->m_Declined[0].second.find("ElementwiseUnary"), std::string::npos) << pRelu->m_Declined[0].second;
    EXPECT_EQ(PlacementsOfType(*opt, LayerType::ElementwiseBinary).size(), 1u) << opt->ToString();  // only mul
    EXPECT_EQ(LogLinesContaining(*opt, "substituted"), 2u);

    // Copies: x, y, m and c into Custom memory; a (to relu and to output 1) and s out of it. All
    // are run by Custom, the side that owns the non-host memory.
    const auto copies = PlacementsOfType(*opt, LayerType::MemCopy);
    EXPECT_GE(copies.size(), 6u) << opt->ToString();
    for (const LayerPlacement& cp : copies) EXPECT_EQ(cp.m_Backend, BackendId("Custom")) << cp.m_LayerName;
    EXPECT_EQ(LogLinesContaining(*opt, "inserted MemCopy"), copies.size());
    const auto numCopies = static_cast<uint64_t>(copies.size());

    NetworkId id = 0;
    std::string error;
    ASSERT_EQ(runtime->LoadNetwork(id, std::move(opt), error), Status::Success) << error;
    EXPECT_EQ(CustomCounter(*runtime, "memory_acquires"), 1u);
    EXPECT_EQ(CustomCounter(*runtime, "context_after_load"), 1u);

    const std::vector<float> xs{1, -2, 3, -4, 5, -6};
    const std::vector<float> ys{0.5f, 0.5f, -1, -1, 2, 2};
    std::vector<float> s(6), a(6);
    ASSERT_EQ(runtime->EnqueueWorkload(id,
                                       {{0, ConstTensor(runtime->GetInputTensorInfo(id, 0), xs.data())},
                                        {1, ConstTensor(runtime->GetInputTensorInfo(id, 1), ys.data())}},
                                       {{0, Tensor(runtime->GetOutputTensorInfo(id, 0), s.data())},
                                        {1, Tensor(runtime->GetOutputTensorInfo(id, 1), a.data())}}),
              Status::Success);
    for (std::size_t i = 0; i < 6; ++i) {
        const float ai = xs[i] + ys[i];
        const float mi = std::max(ai, 0.f) * ys[i];
        EXPECT_FLOAT_EQ(a[i], ai) << i;
        EXPECT_FLOAT_EQ(s[i], mi + c[i % 3]) << i;
    }
    EXPECT_EQ(s, (std::vector<float>{1.25f, -1.f, 0.f, 0.5f, 13.f, 2.f}));

    EXPECT_EQ(CustomCounter(*runtime, "workloads_executed"), 2u + numCopies);
    EXPECT_EQ(CustomCounter(*runtime, "bytes_copied_to_device"), 3u * 24u + 12u);
    const uint64_t toHost = CustomCounter(*runtime, "bytes_copied_to_host");
    EXPECT_GE(toHost, 2u * 24u);
    EXPECT_EQ(toHost % 24u, 0u);
    EXPECT_GE(CustomCounter(*runtime, "device_allocations"), 1u);

    ASSERT_EQ(runtime->UnloadNetwork(id), Status::Success);
    EXPECT_EQ(CustomCounter(*runtime, "memory_releases"), 1u);
    EXPECT_EQ(CustomCounter(*runtime, "device_frees"), CustomCounter(*runtime, "device_allocations"));
    EXPECT_EQ(CustomCounter(*runtime, "context_after_unload"), 1u);
}

/// With only {"Custom"} preferred, a layer it lacks is a clear error carrying Custom's reason.
inline void RunUnsupportedWithoutFallback(const IRuntime::CreationOptions& options) {
    IRuntimePtr runtime = CreateProfilingRuntime(options);
    INetworkPtr net(INetwork::Create());
    IConnectableLayer* x = net->AddInputLayer(0, "x");
    IConnectableLayer* mul = net->AddMultiplicationLayer("square");
    IConnectableLayer* out = net->AddOutputLayer(0);
    x->GetOutputSlot(0).SetTensorInfo(TensorInfo({4}, DataType::Float32));
    x->GetOutputSlot(0).Connect(mul->GetInputSlot(0));
    x->GetOutputSlot(0).Connect(mul->GetInputSlot(1));
    mul->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    try {
        Optimize(*net, {"Custom"}, runtime->GetDeviceSpec());
        ADD_FAILURE() << "expected BackendUnavailableException";
    } catch (const BackendUnavailableException& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'square'"), std::string::npos) << what;
        EXPECT_NE(what.find("Custom: Mul"), std::string::npos) << what;
    }
}


/// Several threads run the mixed network at once: each EnqueueWorkload() call gets its own device
/// working memory, and every result is right.
inline void RunConcurrentInferences(const IRuntime::CreationOptions& options) {
    IRuntimePtr runtime = CreateProfilingRuntime(options);
    INetworkPtr net = BuildMixedNetwork();
    IOptimizedNetworkPtr opt = Optimize(*net, {"Custom", "CpuRef"}, runtime->GetDeviceSpec());
    const auto workloadsPerRun = static_cast<uint64_t>(PlacementsOfType(*opt, LayerType::MemCopy).size() + 2);
    NetworkId id = 0;
    ASSERT_EQ(runtime->LoadNetwork(id, std::move(opt)), Status::Success);
    const std::vector<float> c = MixedNetworkBias();
    constexpr int kThreads = 4, kRuns = 25;
    std::vector<int> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int r = 0; r < kRuns; ++r) {
                std::vector<float> xs(6), ys(6), s(6), a(6);
                for (int i = 0; i < 6; ++i) {
                    xs[i] = static_cast<float>(t * 100 + r - i * 7);
                    ys[i] = static_cast<float>((i % 2 ? -1 : 1) * (t + 1));
                }
                try {
                    runtime->EnqueueWorkload(id,
                                             {{0, ConstTensor(runtime->GetInputTensorInfo(id, 0), xs.data())},
                                              {1, ConstTensor(runtime->GetInputTensorInfo(id, 1), ys.data())}},
                                             {{0, Tensor(runtime->GetOutputTensorInfo(id, 0), s.data())},
                                              {1, Tensor(runtime->GetOutputTensorInfo(id, 1), a.data())}});
                } catch (const std::exception&) {
                    ++wrong[t];
                    continue;
                }
                for (std::size_t i = 0; i < 6; ++i) {
                    const float ai = xs[i] + ys[i];
                    if (a[i] != ai || s[i] != std::max(ai, 0.f) * ys[i] + c[i % 3]) ++wrong[t];
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
    EXPECT_EQ(CustomCounter(*runtime, "workloads_executed"), workloadsPerRun * kThreads * kRuns);
    const uint64_t allocations = CustomCounter(*runtime, "device_allocations");
    EXPECT_GE(allocations, 1u);
    EXPECT_LE(allocations, static_cast<uint64_t>(kThreads)) << "one device arena per concurrent call at most";
    ASSERT_EQ(runtime->UnloadNetwork(id), Status::Success);
    EXPECT_EQ(CustomCounter(*runtime, "device_frees"), allocations);
}

}  // namespace trellis::custom::test

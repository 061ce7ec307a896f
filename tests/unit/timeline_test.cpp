// The runtime's timeline (ProfilingOptions::m_RecordTimeline): every workload of every run is
// timed by the runtime, whatever its backend; a backend may report the steps inside its workload
// (IBackendProfiling::ReportEvent through WorkloadIo::m_Profiling), which nest in the workload.
#include "TestHelpers.hpp"

#include <trellis/backends/BackendRegistry.hpp>

#include <set>

using namespace trellis;
using namespace trellis::test;

namespace {

const std::string kMlp = std::string(TRELLIS_SOURCE_DIR) + "/examples/models/mlp.onnx";

std::vector<TimelineEvent> RunWithTimeline(const std::vector<BackendId>& backends, int runs) {
    IRuntime::CreationOptions o;
    o.m_ProfilingOptions.m_RecordTimeline = true;
    IRuntimePtr runtime = IRuntime::Create(o);
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr net = parser->CreateNetworkFromBinaryFile(kMlp);
    NetworkId id = 0;
    runtime->LoadNetwork(id, Optimize(*net, backends, runtime->GetDeviceSpec()));
    std::vector<float> x(16, 0.5f), y(10);
    for (int r = 0; r < runs; ++r) {
        runtime->EnqueueWorkload(id, {{parser->GetInputs()[0].m_BindingId, ConstTensor(runtime->GetInputTensorInfo(id, 0), x.data())}},
                                 {{parser->GetOutputs()[0].m_BindingId, Tensor(runtime->GetOutputTensorInfo(id, 0), y.data())}});
    }
    std::vector<TimelineEvent> events = runtime->TakeTimeline(id);
    EXPECT_TRUE(runtime->TakeTimeline(id).empty()) << "TakeTimeline must forget what it returned";
    return events;
}

}  // namespace

TEST(Timeline, EveryWorkloadOfEveryRunIsTimedOnCpuRef) {
    const std::vector<TimelineEvent> events = RunWithTimeline({"CpuRef"}, 3);
    // mlp: Gemm, Relu, Gemm, Softmax.
    ASSERT_EQ(events.size(), 12u);
    std::multiset<std::string> names;
    for (const TimelineEvent& e : events) {
        names.insert(e.m_Name);
        EXPECT_EQ(e.m_Backend, BackendId("CpuRef"));
        EXPECT_TRUE(e.m_Parent.empty());
        EXPECT_GT(e.m_StartNs, 0u);
    }
    EXPECT_EQ(names.count("fc1"), 3u);
    EXPECT_EQ(names.count("softmax"), 3u);
    for (std::size_t i = 1; i < events.size(); ++i) {
        EXPECT_GE(events[i].m_StartNs, events[i - 1].m_StartNs + events[i - 1].m_DurationNs) << "workloads run in order";
    }
}

TEST(Timeline, CpuAccReportsTheStepsInsideItsRegion) {
    if (!BackendRegistryInstance().IsBackendRegistered("CpuAcc")) GTEST_SKIP() << "CpuAcc is not built in";
    const std::vector<TimelineEvent> events = RunWithTimeline({"CpuAcc", "CpuRef"}, 2);
    std::size_t regions = 0, steps = 0;
    for (const TimelineEvent& e : events) {
        EXPECT_EQ(e.m_Backend, BackendId("CpuAcc"));
        if (e.m_Parent.empty()) {
            EXPECT_EQ(e.m_Category, "PreCompiled");
            ++regions;
            continue;
        }
        ++steps;
        // Nested in a region execution of the same thread.
        bool inside = false;
        for (const TimelineEvent& p : events) {
            inside = inside || (p.m_Parent.empty() && p.m_Name == e.m_Parent && p.m_Thread == e.m_Thread &&
                                e.m_StartNs >= p.m_StartNs && e.m_StartNs + e.m_DurationNs <= p.m_StartNs + p.m_DurationNs);
        }
        EXPECT_TRUE(inside) << e.m_Name << " is not inside its region's time";
    }
    EXPECT_EQ(regions, 2u);
    EXPECT_GE(steps, 2u * 3u);  // two matmuls and a softmax per run at least
}

TEST(Timeline, NothingIsRecordedUnlessAsked) {
    IRuntimePtr runtime = IRuntime::Create({});
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr net = parser->CreateNetworkFromBinaryFile(kMlp);
    NetworkId id = 0;
    runtime->LoadNetwork(id, Optimize(*net, {"CpuRef"}, runtime->GetDeviceSpec()));
    std::vector<float> x(16, 0.5f), y(10);
    runtime->EnqueueWorkload(id, {{parser->GetInputs()[0].m_BindingId, ConstTensor(runtime->GetInputTensorInfo(id, 0), x.data())}},
                             {{parser->GetOutputs()[0].m_BindingId, Tensor(runtime->GetOutputTensorInfo(id, 0), y.data())}});
    EXPECT_TRUE(runtime->TakeTimeline(id).empty());
    EXPECT_THROW(runtime->TakeTimeline(id + 100), InvalidArgumentException);
}

// SetTimelineRecording switches one network's timeline on and off, whatever the runtime-wide
// m_RecordTimeline said when it was loaded.
TEST(Timeline, RecordingIsSwitchedPerNetwork) {
    IRuntimePtr runtime = IRuntime::Create({});  // m_RecordTimeline off
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr net = parser->CreateNetworkFromBinaryFile(kMlp);
    NetworkId id = 0;
    runtime->LoadNetwork(id, Optimize(*net, {"CpuRef"}, runtime->GetDeviceSpec()));
    std::vector<float> x(16, 0.5f), y(10);
    const auto run = [&] {
        runtime->EnqueueWorkload(id, {{parser->GetInputs()[0].m_BindingId, ConstTensor(runtime->GetInputTensorInfo(id, 0), x.data())}},
                                 {{parser->GetOutputs()[0].m_BindingId, Tensor(runtime->GetOutputTensorInfo(id, 0), y.data())}});
    };
    run();
    EXPECT_TRUE(runtime->TakeTimeline(id).empty());
    runtime->SetTimelineRecording(id, true);
    run();
    EXPECT_EQ(runtime->TakeTimeline(id).size(), 4u);  // mlp on CpuRef: Gemm, Relu, Gemm, Softmax
    runtime->SetTimelineRecording(id, false);
    run();
    EXPECT_TRUE(runtime->TakeTimeline(id).empty());
    EXPECT_THROW(runtime->SetTimelineRecording(id + 100, true), InvalidArgumentException);
}

// The Custom sample backend as a dynamic backend: Sample_Custom_backend.so, loaded by the runtime
// from the directory given in IRuntime::CreationOptions::m_DynamicBackendsPath, runs the same
// end-to-end flows as the linked-in form (CustomEndToEndTestImpl.hpp). Compiled into
// trellis_unit_tests, which does not link the Custom objects.
#include "CustomEndToEndTestImpl.hpp"

#include <filesystem>

using namespace trellis;

namespace {

IRuntime::CreationOptions DynamicOptions() {
    IRuntime::CreationOptions options;
    options.m_DynamicBackendsPath = TRELLIS_CUSTOM_BACKEND_DIR;
    return options;
}

/// True when libtrellis was built with TRELLIS_LINK_CUSTOM_BACKEND: then "Custom" is registered
/// before any runtime exists and the file must be skipped.
bool CustomIsBuiltIn() { return BackendRegistryInstance().IsBackendRegistered("Custom"); }

}  // namespace

TEST(CustomDynamicBackend, FileIsLoadedAndDeregisteredWithTheRuntime) {
    const bool builtIn = CustomIsBuiltIn();
    {
        IRuntimePtr runtime = IRuntime::Create(DynamicOptions());
        EXPECT_TRUE(runtime->GetDynamicBackendWarnings().empty());
        const std::vector<DynamicBackendStatus> status = runtime->GetDynamicBackendStatus();
        ASSERT_EQ(status.size(), 1u) << "the directory must hold only Sample_Custom_backend.so";
        EXPECT_EQ(std::filesystem::path(status[0].m_Path).filename(), "Sample_Custom_backend.so");
        EXPECT_EQ(status[0].m_Id, BackendId("Custom"));
        EXPECT_EQ(status[0].m_Version, kBackendApiVersion);
        if (builtIn) {
            EXPECT_FALSE(status[0].m_Loaded);
            EXPECT_NE(status[0].m_Reason.find("already registered"), std::string::npos) << status[0].m_Reason;
        } else {
            EXPECT_TRUE(status[0].m_Loaded) << status[0].m_Reason;
            EXPECT_EQ(BackendRegistryInstance().GetOrigin("Custom"), status[0].m_CanonicalPath);
        }
    }
    EXPECT_EQ(BackendRegistryInstance().IsBackendRegistered("Custom"), builtIn);
}

TEST(CustomDynamicBackend, AdditionToPreCompiled) {
    if (CustomIsBuiltIn()) GTEST_SKIP() << "Custom is linked into libtrellis (TRELLIS_LINK_CUSTOM_BACKEND), so the file is skipped";
    trellis::custom::test::RunAdditionToPreCompiled(DynamicOptions());
}

TEST(CustomDynamicBackend, MixedNetworkFallsBackToCpuRef) {
    if (CustomIsBuiltIn()) GTEST_SKIP() << "Custom is linked into libtrellis (TRELLIS_LINK_CUSTOM_BACKEND), so the file is skipped";
    trellis::custom::test::RunMixedNetworkWithFallback(DynamicOptions());
}

TEST(CustomDynamicBackend, UnsupportedLayerWithoutFallbackIsAClearError) {
    if (CustomIsBuiltIn()) GTEST_SKIP() << "Custom is linked into libtrellis (TRELLIS_LINK_CUSTOM_BACKEND), so the file is skipped";
    trellis::custom::test::RunUnsupportedWithoutFallback(DynamicOptions());
}

TEST(CustomDynamicBackend, ConcurrentInferencesEachGetTheirOwnDeviceMemory) {
    if (CustomIsBuiltIn()) GTEST_SKIP() << "Custom is linked into libtrellis (TRELLIS_LINK_CUSTOM_BACKEND), so the file is skipped";
    trellis::custom::test::RunConcurrentInferences(DynamicOptions());
}

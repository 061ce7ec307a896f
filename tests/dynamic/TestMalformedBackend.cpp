// Test dynamic backends that the loader must skip, one shared object per case, all from this one
// source: tests/dynamic/CMakeLists.txt builds it once per case with one TEST_* definition.
// Deliberately written WITHOUT TRELLIS_DYNAMIC_BACKEND, so that a throwing function really lets
// its exception escape across the extern "C" boundary: the loader must catch it.
//
//   TEST_NO_GET_BACKEND_ID     GetBackendId is not exported
//   TEST_NO_GET_VERSION        GetVersion is not exported
//   TEST_NO_BACKEND_FACTORY    BackendFactory is not exported
//   TEST_FACTORY_NULL          BackendFactory returns nullptr
//   TEST_FACTORY_THROWS        BackendFactory throws std::runtime_error
//   TEST_GET_ID_THROWS         GetBackendId throws std::runtime_error
//   TEST_GET_VERSION_THROWS    GetVersion throws an int (not a std::exception)
//   TEST_VERSION_MAJOR_NEWER   GetVersion says <engine major + 1>.0
//   TEST_VERSION_MINOR_NEWER   GetVersion says <engine major>.<engine minor + 1>
//   TEST_VERSION_MAJOR_OLDER   GetVersion says <engine major - 1>.9
//   TEST_ID=<string>           GetBackendId returns this id (default "TestMalformed")
//   TEST_OBJECT_ID=<string>    the backend object's GetId() returns this (default TEST_ID)
#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendVersion.hpp>
#include <trellis/backends/IBackendInternal.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

#ifndef TEST_ID
#define TEST_ID "TestMalformed"
#endif
#ifndef TEST_OBJECT_ID
#define TEST_OBJECT_ID TEST_ID
#endif

#define TEST_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

class NothingSupported final : public trellis::ILayerSupport {
public:
    bool IsLayerSupported(const trellis::QueueDescriptor& layer, const trellis::WorkloadInfo&,
                          std::string* reason) const override {
        if (reason) *reason = std::string(trellis::GetLayerTypeName(layer.m_Type)) + ": " TEST_ID " supports no layer";
        return false;
    }
};

class NoWorkloads final : public trellis::IWorkloadFactory {
public:
    const trellis::BackendId& GetBackendId() const override { return m_Id; }
    trellis::IWorkloadPtr CreateWorkload(const trellis::QueueDescriptor& layer,
                                         const trellis::WorkloadInfo&) const override {
        throw trellis::LayerValidationException(TEST_ID " creates no workload (layer '" + layer.m_LayerName + "')");
    }
private:
    trellis::BackendId m_Id{TEST_OBJECT_ID};
};

class MalformedTestBackend final : public trellis::IBackendInternal {
public:
    const trellis::BackendId& GetId() const override { return m_Id; }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const override {
        return std::make_unique<NoWorkloads>();
    }
    ILayerSupportSharedPtr GetLayerSupport() const override { return std::make_shared<NothingSupported>(); }
private:
    trellis::BackendId m_Id{TEST_OBJECT_ID};
};

}  // namespace

#ifndef TEST_NO_GET_BACKEND_ID
TEST_EXPORT const char* GetBackendId() {
#ifdef TEST_GET_ID_THROWS
    throw std::runtime_error("GetBackendId of the test backend fails on purpose");
#else
    return TEST_ID;
#endif
}
#endif

#ifndef TEST_NO_GET_VERSION
TEST_EXPORT void GetVersion(uint32_t* outMajor, uint32_t* outMinor) {
    uint32_t major = trellis::kBackendApiVersion.m_Major;
    uint32_t minor = trellis::kBackendApiVersion.m_Minor;
#if defined(TEST_GET_VERSION_THROWS)
    throw 42;
#elif defined(TEST_VERSION_MAJOR_NEWER)
    major += 1;
    minor = 0;
#elif defined(TEST_VERSION_MINOR_NEWER)
    minor += 1;
#elif defined(TEST_VERSION_MAJOR_OLDER)
    major -= 1;
    minor = 9;
#endif
    *outMajor = major;
    *outMinor = minor;
}
#endif

#ifndef TEST_NO_BACKEND_FACTORY
TEST_EXPORT void* BackendFactory() {
#if defined(TEST_FACTORY_NULL)
    return nullptr;
#elif defined(TEST_FACTORY_THROWS)
    throw std::runtime_error("BackendFactory of the test backend fails on purpose");
#else
    return static_cast<trellis::IBackendInternal*>(new MalformedTestBackend());
#endif
}
#endif

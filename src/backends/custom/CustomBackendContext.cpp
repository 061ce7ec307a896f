// Custom: backend context (load/unload notifications) and profiling context (device counters).
#include "CustomBackendContext.hpp"

namespace trellis::custom {

bool CustomBackendContext::BeforeLoadNetwork(NetworkId) {
    CustomDevice::Instance().Count(CustomCounter::ContextBeforeLoad);
    return true;
}

bool CustomBackendContext::AfterLoadNetwork(NetworkId) {
    CustomDevice::Instance().Count(CustomCounter::ContextAfterLoad);
    return true;
}

bool CustomBackendContext::BeforeUnloadNetwork(NetworkId) {
    CustomDevice::Instance().Count(CustomCounter::ContextBeforeUnload);
    return true;
}

bool CustomBackendContext::AfterUnloadNetwork(NetworkId) {
    CustomDevice::Instance().Count(CustomCounter::ContextAfterUnload);
    return true;
}

CustomBackendProfilingContext::~CustomBackendProfilingContext() {
    // After this returns no event is being forwarded to this object (the device holds its sink
    // lock while forwarding).
    if (m_Registered) CustomDevice::Instance().RemoveSink(this);
}

void CustomBackendProfilingContext::RegisterCounters() {
    if (m_Registered) return;
    for (unsigned int c = 0; c < kNumCustomCounters; ++c) {
        const auto counter = static_cast<CustomCounter>(c);
        m_Ids[c] = m_Profiling.RegisterCounter(GetCounterName(counter), GetCounterDescription(counter));
    }
    m_Registered = true;
    CustomDevice::Instance().AddSink(this);
}

bool CustomBackendProfilingContext::EnableProfiling(bool enabled) {
    m_Enabled = enabled;
    return true;
}

void CustomBackendProfilingContext::OnCounter(CustomCounter counter, uint64_t delta) {
    const auto c = static_cast<unsigned int>(counter);
    if (m_Enabled && c < kNumCustomCounters) m_Profiling.ReportCounterValue(m_Ids[c], delta);
}

}  // namespace trellis::custom

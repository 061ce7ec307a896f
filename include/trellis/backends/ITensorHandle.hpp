// Backend SDK: tensor handles.
//
// A tensor handle is the backend's view of one tensor's memory during one EnqueueWorkload() call.
// Ownership: the runtime owns the handles it passes to IWorkload::Execute(); they are valid only
// for that call. Thread-safety: a handle is used by one call at a time.
#pragma once

#include <trellis/Types.hpp>

namespace trellis {

class ITensorHandle {
public:
    virtual ~ITensorHandle() = default;
    virtual const TensorInfo& GetTensorInfo() const = 0;
    /// CPU-visible pointer to the tensor's first element (row-major, densely packed).
    virtual void* Map() const = 0;
    virtual void Unmap() const {}
};

/// A handle over memory someone else owns (the runtime's arena, a user buffer, a constant).
class PassthroughTensorHandle final : public ITensorHandle {
public:
    PassthroughTensorHandle() = default;
    PassthroughTensorHandle(const TensorInfo& info, void* memory) : m_Info(info), m_Memory(memory) {}
    const TensorInfo& GetTensorInfo() const override { return m_Info; }
    void* Map() const override { return m_Memory; }
    void Reset(const TensorInfo& info, void* memory) { m_Info = info; m_Memory = memory; }
private:
    TensorInfo m_Info;
    void* m_Memory = nullptr;
};

}  // namespace trellis

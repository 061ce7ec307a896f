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
    /// CPU-visible pointer to the tensor's first element (row-major, densely packed). Never null
    /// in the handles the runtime passes to Execute(), not even for a tensor with no elements:
    /// that one maps to EmptyTensorAddress(), so a kernel may hand it to memcpy/memset with size
    /// 0, and any access through it faults.
    virtual void* Map() const = 0;
    virtual void Unmap() const {}
};

/// Where tensors with no elements live: a non-null address in a page that can be neither read
/// nor written (a kernel that touches an empty tensor crashes at once instead of corrupting
/// memory). The same address for the whole process; defined in libtrellis.
void* EmptyTensorAddress();

/// A handle over memory someone else owns (the runtime's arena, a user buffer, a constant).
/// For a tensor with no elements given no memory (an empty vector's data(), say) it maps to
/// EmptyTensorAddress() instead of null, as Map() promises.
class PassthroughTensorHandle final : public ITensorHandle {
public:
    PassthroughTensorHandle() = default;
    PassthroughTensorHandle(const TensorInfo& info, void* memory) { Reset(info, memory); }
    const TensorInfo& GetTensorInfo() const override { return m_Info; }
    void* Map() const override { return m_Memory; }
    void Reset(const TensorInfo& info, void* memory) {
        m_Info = info;
        m_Memory = memory || info.GetNumElements() != 0 ? memory : EmptyTensorAddress();
    }
private:

    TensorInfo m_Info;
    void* m_Memory = nullptr;
};

}  // namespace trellis

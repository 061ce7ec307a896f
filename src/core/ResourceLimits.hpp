// Internal: the resource limits of OptimizerOptions (m_MaxTensorBytes, m_MaxWorkingMemoryBytes),
// resolved to bytes and checked. See include/trellis/INetwork.hpp for the contract and
// docs/reliability.md for the defaults.
//
// Contract: every check throws ResourceLimitException with a message naming the thing (layer and
// output, or the network's plan), its size, the limit and how to raise it; none allocates the
// memory it checks.
#pragma once

#include <trellis/Types.hpp>

#include <cstddef>
#include <string>

namespace trellis::core {

/// Bytes of physical memory of this machine (sysconf), or SIZE_MAX when it cannot be told.
std::size_t PhysicalMemoryBytes();
/// A limit as OptimizerOptions holds it (0 = the machine's physical memory), in bytes.
std::size_t ResolveMemoryLimit(std::size_t given);
/// "1.50 GiB (1610612736 bytes)"; plain "N bytes" below 1 KiB.
std::string FormatBytes(std::size_t bytes);

/// Throws ResourceLimitException unless `info` (output `output` of the layer `where` describes,
/// e.g. "ConstantOfShape 'c'") fits `limitBytes` (already resolved). Element and byte counts
/// are computed with overflow checks: a shape whose byte count does not fit 64 bits is refused
/// whatever the limit.
void CheckTensorLimit(const std::string& where, unsigned int output, const TensorInfo& info, std::size_t limitBytes);

}  // namespace trellis::core

// Backend SDK: what a backend's OptimizeSubgraph() returns.
//
// Three lists that together must cover exactly the layers of the sub-graph it was given:
//  - substitutions: (part of the original, replacement built from layers created in GetINetwork()),
//  - failed: parts the backend cannot run; the optimizer re-assigns them to the next backend in
//    the user's preference list,
//  - untouched: parts that run as they are on this backend.
// Ownership: the views hold the network that owns replacement layers. Not thread-safe.
#pragma once

#include <trellis/backends/SubgraphView.hpp>

#include <vector>

namespace trellis {

struct SubstitutionPair {
    SubgraphView m_SubstitutableSubgraph;  ///< layers of the original sub-graph to replace
    SubgraphView m_ReplacementSubgraph;    ///< new layers, created in OptimizationViews::GetINetwork()
};

class OptimizationViews {
public:
    using Substitutions = std::vector<SubstitutionPair>;
    using Subgraphs = std::vector<SubgraphView>;

    OptimizationViews();
    OptimizationViews(OptimizationViews&&) noexcept = default;
    OptimizationViews& operator=(OptimizationViews&&) noexcept = default;

    void AddSubstitution(SubstitutionPair&& s) { m_Substitutions.push_back(std::move(s)); }
    void AddFailedSubgraph(SubgraphView&& s) { m_Failed.push_back(std::move(s)); }
    void AddUntouchedSubgraph(SubgraphView&& s) { m_Untouched.push_back(std::move(s)); }

    const Substitutions& GetSubstitutions() const { return m_Substitutions; }
    const Subgraphs& GetFailedSubgraphs() const { return m_Failed; }
    const Subgraphs& GetUntouchedSubgraphs() const { return m_Untouched; }

    /// Network in which to create replacement layers.
    INetwork* GetINetwork() { return m_Network.get(); }
private:
    Substitutions m_Substitutions;
    Subgraphs m_Failed;
    Subgraphs m_Untouched;
    INetworkPtr m_Network;
};

}  // namespace trellis

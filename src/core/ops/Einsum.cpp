// Einsum (ONNX Einsum): validation, shape inference and equation resolution.
//
// The equation ONNX gives ("bij, bjk -> bik", "...ii->...i", "i,i" with an implicit output) is
// rewritten into the explicit form every backend reads: no spaces, "->" always present, each
// ellipsis replaced by letters the equation does not use (right-aligned, so an input with fewer
// ellipsis dims takes the last ones; those dims broadcast: equal or 1). The implicit output is
// the ellipsis dims, then the letters used exactly once, in alphabetical order (numpy's rule).
// A letter repeated within one input takes that input's diagonal; a letter's dims must agree
// (ellipsis dims may also be 1).
#include "core/InferContext.hpp"

#include <algorithm>
#include <map>

namespace trellis::core {

namespace {

bool IsLabel(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

struct Term {
    std::string m_Labels;       // the letters, in order, ellipsis removed
    int m_EllipsisAt = -1;      // position of the ellipsis among m_Labels' letters; -1 = none
};

Term ParseTerm(const InferContext& ctx, const std::string& text, const std::string& equation) {
    Term t;
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == ' ') {
            ++i;
        } else if (IsLabel(c)) {
            t.m_Labels += c;
            ++i;
        } else if (text.compare(i, 3, "...") == 0) {
            if (t.m_EllipsisAt >= 0) ctx.Fail("equation '" + equation + "': term '" + text + "' has two ellipses");
            t.m_EllipsisAt = static_cast<int>(t.m_Labels.size());
            i += 3;
        } else {
            ctx.Fail("equation '" + equation + "': character '" + std::string(1, c) +
                     "' is not a letter, ',', '->' or '...'");
        }
    }
    return t;
}

}  // namespace

std::vector<TensorInfo> EinsumInfer(InferContext& ctx) {
    auto& d = ctx.Desc<EinsumDescriptor>();
    const std::string equation = d.m_Equation;
    const TensorInfo& x0 = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64, DataType::Float16, DataType::BFloat16, DataType::Signed32,
                         DataType::Signed64});
    for (unsigned int i = 1; i < ctx.GetNumInputs(); ++i) ctx.ExpectType(i, x0.GetDataType());

    const std::size_t arrow = equation.find("->");
    const std::string lhs = equation.substr(0, arrow);
    std::vector<Term> inputs;
    for (std::size_t start = 0;;) {
        const std::size_t comma = lhs.find(',', start);
        inputs.push_back(ParseTerm(ctx, lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start),
                                   equation));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (inputs.size() != ctx.GetNumInputs()) {
        ctx.Fail("equation '" + equation + "' has " + std::to_string(inputs.size()) + " input terms, the layer " +
                 std::to_string(ctx.GetNumInputs()) + " inputs");
    }

    // The ellipsis dims of every input, right-aligned to the longest.
    std::string used;
    for (const Term& t : inputs) used += t.m_Labels;
    unsigned int ellipsisRank = 0;
    for (unsigned int i = 0; i < inputs.size(); ++i) {
        const unsigned int rank = ctx.Input(i).GetNumDimensions();
        const std::size_t letters = inputs[i].m_Labels.size();
        if (inputs[i].m_EllipsisAt < 0 ? rank != letters : rank < letters) {
            ctx.Fail("equation '" + equation + "': input " + std::to_string(i) + " " +
                     ctx.Input(i).GetShape().ToString() + " has rank " + std::to_string(rank) + ", its term names " +
                     std::to_string(letters) + " dims" + (inputs[i].m_EllipsisAt < 0 ? "" : " besides the ellipsis"));
        }
        if (inputs[i].m_EllipsisAt >= 0) ellipsisRank = std::max(ellipsisRank, static_cast<unsigned int>(rank - letters));
    }
    std::string ellipsis;
    for (char c = 'A'; ellipsis.size() < ellipsisRank && c <= 'z'; ++c) {
        if (IsLabel(c) && used.find(c) == std::string::npos) ellipsis += c;
    }
    if (ellipsis.size() < ellipsisRank) ctx.Fail("equation '" + equation + "' uses too many letters to name its ellipsis dims");

    // Each input's labels in dim order, and the size of every label.
    std::map<char, unsigned int> size;
    std::map<char, bool> isEllipsis;
    std::vector<std::string> expanded;
    for (unsigned int i = 0; i < inputs.size(); ++i) {
        const Term& t = inputs[i];
        std::string labels = t.m_Labels;
        if (t.m_EllipsisAt >= 0) {
            const unsigned int n = ctx.Input(i).GetNumDimensions() - static_cast<unsigned int>(t.m_Labels.size());
            labels.insert(static_cast<std::size_t>(t.m_EllipsisAt), ellipsis.substr(ellipsisRank - n));
        }
        const TensorShape& s = ctx.Input(i).GetShape();
        for (unsigned int k = 0; k < labels.size(); ++k) {
            const char c = labels[k];
            const bool ell = ellipsis.find(c) != std::string::npos;
            isEllipsis[c] = ell;
            auto it = size.find(c);
            if (it == size.end()) {
                size[c] = s[k];
            } else if (it->second != s[k]) {
                if (ell && (it->second == 1 || s[k] == 1)) {
                    it->second = std::max(it->second, s[k]);
                } else {
                    ctx.Fail("equation '" + equation + "': " +
                             (ell ? std::string("an ellipsis dim") : "label '" + std::string(1, c) + "'") + " is " +
                             std::to_string(it->second) + " in one place and " + std::to_string(s[k]) + " in input " +
                             std::to_string(i) + " " + s.ToString() + (ell ? " (they must be equal or 1)" : ""));
                }
            }
        }
        expanded.push_back(labels);
    }

    std::string out;
    if (arrow == std::string::npos) {
        std::string once;
        for (const auto& [c, n] : size) {
            if (!isEllipsis[c] && std::count(used.begin(), used.end(), c) == 1) once += c;
        }
        out = ellipsis + once;  // std::map iterates letters in ASCII order: 'A'..'Z' before 'a'..'z', as numpy
    } else {
        const Term t = ParseTerm(ctx, equation.substr(arrow + 2), equation);
        out = t.m_Labels;
        if (t.m_EllipsisAt >= 0) out.insert(static_cast<std::size_t>(t.m_EllipsisAt), ellipsis);
        for (std::size_t k = 0; k < out.size(); ++k) {
            if (!size.count(out[k])) {
                ctx.Fail("equation '" + equation + "': output label '" + std::string(1, out[k]) + "' names no input dim");
            }
            if (out.find(out[k], k + 1) != std::string::npos) {
                ctx.Fail("equation '" + equation + "': output label '" + std::string(1, out[k]) + "' appears twice");
            }
        }
    }

    std::string resolved;
    for (std::size_t i = 0; i < expanded.size(); ++i) resolved += (i ? "," : "") + expanded[i];
    d.m_Equation = resolved + "->" + out;
    std::vector<unsigned int> dims;
    for (char c : out) dims.push_back(size[c]);
    return {TensorInfo(TensorShape(dims), x0.GetDataType())};
}

}  // namespace trellis::core

// Code generator, soft target: printing a kernel's parameter object (see
// src/backends/reference/kernels/KernelSnippets.md, rule 3) as an aggregate initializer, so the
// artifact's constructor configures the kernel with the values CpuRef computed.
#pragma once

#include "../../dom/ArtifactFactory.hpp"

#include <array>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace trellis::codegen::soft {

namespace detail {

template <typename T> struct IsSequence : std::false_type {};
template <typename T, typename A> struct IsSequence<std::vector<T, A>> : std::true_type {};
template <typename T> struct IsArray : std::false_type {};
template <typename T, std::size_t N> struct IsArray<std::array<T, N>> : std::true_type {};

struct FieldProbe {
    template <typename T> void operator()(const T&) const {}
};
template <typename T, typename = void> struct HasFields : std::false_type {};
template <typename T>
struct HasFields<T, std::void_t<decltype(std::declval<const T&>().Fields(std::declval<FieldProbe&>()))>> : std::true_type {};

template <typename T>
ArtifactExprPtr ValueExpr(const T& v) {
    using F = ArtifactFactory;
    if constexpr (std::is_same_v<T, bool>) {
        return F::Bool(v);
    } else if constexpr (std::is_enum_v<T>) {
        // Kernel enums name their type and values (KernelEnumType, KernelEnumName; found by ADL).
        return F::Lit(std::string("trellis::kernels::") + KernelEnumType(v) + "::" + KernelEnumName(v));
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        return F::Int(static_cast<int64_t>(v));
    } else if constexpr (std::is_integral_v<T>) {
        return F::Size(static_cast<uint64_t>(v));
    } else if constexpr (std::is_same_v<T, float>) {
        return F::Float(v);
    } else if constexpr (std::is_same_v<T, double>) {
        return F::Double(v);
    } else if constexpr (IsSequence<T>::value) {
        std::vector<ArtifactExprPtr> elements;
        for (const auto& e : v) elements.push_back(ValueExpr(e));
        return F::Braces(std::move(elements));
    } else if constexpr (IsArray<T>::value) {
        // std::array: the braces of its inner C array too, so that no element's braces are elided.
        std::vector<ArtifactExprPtr> elements;
        for (const auto& e : v) elements.push_back(ValueExpr(e));
        return F::Braces({F::Braces(std::move(elements))});
    } else {
        static_assert(HasFields<T>::value, "a kernel parameter field of a type the printer does not know");
        std::vector<ArtifactExprPtr> fields;
        v.Fields([&](const auto& field) { fields.push_back(ValueExpr(field)); });
        return F::Braces(std::move(fields));
    }
}

}  // namespace detail

template <typename P>
ArtifactExprPtr ParamsInitializer(const P& params, const std::string& typeName) {
    std::vector<ArtifactExprPtr> fields;
    params.Fields([&](const auto& field) { fields.push_back(detail::ValueExpr(field)); });
    return ArtifactFactory::Braces(std::move(fields), typeName);
}

}  // namespace trellis::codegen::soft

// Trellis: the whole application API in one include.
#pragma once

#include <trellis/Compare.hpp>
#include <trellis/Descriptors.hpp>
#include <trellis/Exceptions.hpp>
#include <trellis/INetwork.hpp>
#include <trellis/IRuntime.hpp>
#include <trellis/Types.hpp>

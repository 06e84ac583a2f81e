// Shared machinery of the pointwise kernel family, in three parts: argument
// checks and dtype rules (pointwise_checks.h), strided views and the parallel
// N-operand loop (strided_loop.h), dtype dispatch, conversions and copies
// (dtype_dispatch.h).
#pragma once

#include "dtype_dispatch.h"
#include "pointwise_checks.h"
#include "strided_loop.h"

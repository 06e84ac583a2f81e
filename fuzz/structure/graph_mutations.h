// Field-level mutations of an XNNPACK delegate blob's graph (fuzz/structure/containers.h's
// XnnBlob): node and value union kinds, unions naming a type without a table, value
// ids rewired, consumers and producers dropped, shapes, element types, quantization
// parameters, node parameters, the graph's interface and its constant table.
#pragma once

#include "containers.h"
#include "random_values.h"

namespace etrt_fuzz {

// Applies one mutation to the graph. Returns its name, or nullptr when the one drawn had
// nothing to apply to.
const char* mutate_graph(XnnBlob& blob, Random& random);

// Copies a node or a value of `donor` into `blob`, ids unchanged.
const char* cross_graphs(XnnBlob& blob, const XnnBlob& donor, Random& random);

// The names mutate_graph can return, for tests and statistics.
const std::vector<const char*>& graph_mutation_names();

}  // namespace etrt_fuzz

# Sources of the elementwise, activation, reduction, softmax, shape and indexing kernels
# (binary_elementwise.cpp, listed in the plugin's CMakeLists.txt, shares their machinery).
set(KERNELS_POINTWISE_SOURCES
  pointwise_table.cpp
  tensor_copy.cpp
  unary_elementwise.cpp
  softmax.cpp
  reductions.cpp
  shape_ops.cpp
  indexing.cpp)

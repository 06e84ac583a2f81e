# Sources of the elementwise, activation, reduction, softmax, shape and indexing kernels
# (binary_elementwise.cpp, listed in the plugin's CMakeLists.txt, shares their machinery).
set(KERNELS_POINTWISE_SOURCES
  tensor_copy.cpp
  where_ops.cpp
  unary_elementwise.cpp
  softmax.cpp
  reductions.cpp
  copy_ops.cpp
  view_ops.cpp
  join_ops.cpp
  reorder_ops.cpp
  indexing.cpp
  scatter_ops.cpp
  resample_ops.cpp
  quantized_ops.cpp
  random_ops.cpp
  distance_ops.cpp)

# Sources of the elementwise, activation, reduction, softmax, shape and indexing kernels.
set(KERNELS_POINTWISE_SOURCES pointwise_table.cpp)

# Sources of the matrix multiplication, convolution, pooling and normalisation kernels.
set(KERNELS_LINALG_SOURCES
  linalg_table.cpp
  gemm.cpp
  matmul.cpp
  convolution.cpp
  pooling.cpp
  normalization.cpp)

# Sources of the matrix multiplication, convolution, pooling and normalisation kernels.
set(KERNELS_LINALG_SOURCES
  gemm.cpp
  small_gemm.cpp
  matmul.cpp
  convolution.cpp
  pooling.cpp
  normalization.cpp
  normalization_stats.cpp)

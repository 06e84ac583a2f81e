# Tests of the pointwise kernel family: etrt_kernel_test(<name> <sources>).
etrt_kernel_test(pointwise_unary_test pointwise_unary_test.cpp)
etrt_kernel_test(pointwise_shape_test pointwise_shape_test.cpp)
etrt_kernel_test(pointwise_throughput_test pointwise_throughput_test.cpp)
etrt_kernel_test(reorder_ops_test reorder_ops_test.cpp)
etrt_kernel_test(scatter_ops_test scatter_ops_test.cpp)
etrt_kernel_test(resample_ops_test resample_ops_test.cpp)
etrt_kernel_test(quantized_ops_test quantized_ops_test.cpp)
etrt_kernel_test(reduction_ops_test reduction_ops_test.cpp)
etrt_kernel_test(random_ops_test random_ops_test.cpp)
# The vector math header (plugins/common) against libm.
etrt_kernel_test(vector_math_test vector_math_test.cpp)
target_include_directories(vector_math_test PRIVATE ${PROJECT_SOURCE_DIR}/plugins/common)
# float16/bfloat16 conversions (etrt/half.hpp), with the F16C path checked against the portable one on x86-64.
etrt_kernel_test(half_conversion_test half_conversion_test.cpp)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  target_sources(half_conversion_test PRIVATE half_conversion_f16c.cpp)
  set_source_files_properties(half_conversion_f16c.cpp PROPERTIES COMPILE_OPTIONS "-mf16c")
  target_compile_definitions(half_conversion_test PRIVATE ETRT_TEST_F16C)
endif()
# Half-precision kernels (computed in float32, rounded on store) against their float32 results.
etrt_kernel_test(half_kernels_test half_kernels_test.cpp)

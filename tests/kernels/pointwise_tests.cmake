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

# Tests of the pointwise kernel family: etrt_kernel_test(<name> <sources>).
etrt_kernel_test(pointwise_binary_test pointwise_binary_test.cpp)
etrt_kernel_test(pointwise_unary_test pointwise_unary_test.cpp)
etrt_kernel_test(pointwise_shape_test pointwise_shape_test.cpp)
etrt_kernel_test(pointwise_throughput_test pointwise_throughput_test.cpp)

# Tests of the linear algebra kernel family: etrt_kernel_test(<name> <sources>).
etrt_kernel_test(linalg_matmul_test linalg_matmul_test.cpp)
etrt_kernel_test(linalg_conv_test linalg_conv_test.cpp)
etrt_kernel_test(linalg_pool_test linalg_pool_test.cpp)
etrt_kernel_test(linalg_norm_test linalg_norm_test.cpp)

# The same GEMM-based tests on the portable micro-kernels (ETRT_GEMM_ISA=generic
# disables the AVX2+FMA paths) and with an odd thread count (uneven splits).
foreach(test linalg_matmul_test linalg_conv_test)
  add_test(NAME ${test}_generic_isa COMMAND ${test})
  set_tests_properties(${test}_generic_isa PROPERTIES ENVIRONMENT "ETRT_PLUGIN_PATH=;ETRT_NUM_THREADS=;ETRT_GEMM_ISA=generic")
  add_test(NAME ${test}_3_threads COMMAND ${test})
  set_tests_properties(${test}_3_threads PROPERTIES ENVIRONMENT "ETRT_PLUGIN_PATH=;ETRT_NUM_THREADS=3")
endforeach()

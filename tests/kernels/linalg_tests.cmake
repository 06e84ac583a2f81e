# Tests of the linear algebra kernel family: etrt_kernel_test(<name> <sources>).
etrt_kernel_test(linalg_matmul_test linalg_matmul_test.cpp)
etrt_kernel_test(linalg_small_gemm_test linalg_small_gemm_test.cpp)
etrt_kernel_test(linalg_conv_test linalg_conv_test.cpp)
etrt_kernel_test(linalg_pool_test linalg_pool_test.cpp)
etrt_kernel_test(linalg_norm_test linalg_norm_test.cpp)

# The same GEMM-based tests on the portable micro-kernels (ETRT_GEMM_ISA=generic
# disables the AVX2+FMA paths) and with an odd thread count (uneven splits).
foreach(test linalg_matmul_test linalg_small_gemm_test linalg_conv_test)
  add_test(NAME ${test}_generic_isa COMMAND ${test})
  set_tests_properties(${test}_generic_isa PROPERTIES ENVIRONMENT "ETRT_PLUGIN_PATH=;ETRT_NUM_THREADS=;ETRT_GEMM_ISA=generic")
  add_test(NAME ${test}_3_threads COMMAND ${test})
  set_tests_properties(${test}_3_threads PROPERTIES ENVIRONMENT "ETRT_PLUGIN_PATH=;ETRT_NUM_THREADS=3")
endforeach()

# The micro-kernel a process picks, in processes of their own (the choice is made once, at the
# first SGEMM, and logged at debug level); the other runs of linalg_matmul_test leave that test out.
add_test(NAME linalg_matmul_isa COMMAND linalg_matmul_test --gtest_filter=GemmMicroKernel.*)
set_tests_properties(linalg_matmul_isa PROPERTIES ENVIRONMENT "ETRT_PLUGIN_PATH=;ETRT_NUM_THREADS=;ETRT_LOG_LEVEL=debug")
add_test(NAME linalg_matmul_isa_generic COMMAND linalg_matmul_test --gtest_filter=GemmMicroKernel.*)
set_tests_properties(linalg_matmul_isa_generic PROPERTIES
  ENVIRONMENT "ETRT_PLUGIN_PATH=;ETRT_NUM_THREADS=;ETRT_LOG_LEVEL=debug;ETRT_GEMM_ISA=generic")
set_property(TEST linalg_matmul_test linalg_matmul_test_generic_isa linalg_matmul_test_3_threads
  APPEND PROPERTY ENVIRONMENT "GTEST_FILTER=-GemmMicroKernel.*")

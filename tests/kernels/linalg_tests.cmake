# Tests of the linear algebra kernel family: etrt_kernel_test(<name> <sources>).

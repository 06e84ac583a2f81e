# Tests of the pointwise kernel family: etrt_kernel_test(<name> <sources>).

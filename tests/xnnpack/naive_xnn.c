/* Calls XNNPACK through an ordinary link dependency (DT_NEEDED libXNNPACK). */
#include <xnnpack.h>

__attribute__((visibility("default"))) int etrt_naive_initialize(void) { return (int)xnn_initialize(NULL); }

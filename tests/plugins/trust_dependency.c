/* A library a trust test plugin needs (DT_NEEDED). Its constructor leaves the
 * marker "dependency": a test that refuses the plugin checks that this code
 * never ran, one that loads it that it did. */
#include "trust_marker.h"

__attribute__((constructor)) static void on_load(void) { trust_leave_marker("dependency"); }

__attribute__((visibility("default"))) int trust_dependency_value(void) { return 42; }

/* Linked into a trust test plugin: its constructor leaves the marker
 * TEST_PLUGIN_NAME. With TRUST_NEEDS_DEPENDENCY the plugin also needs
 * libtrust_dependency.so, found through the search path the test writes into a
 * copy of the plugin. */
#include "trust_marker.h"

__attribute__((constructor)) static void on_load(void) { trust_leave_marker(TEST_PLUGIN_NAME); }

#ifdef TRUST_NEEDS_DEPENDENCY
int trust_dependency_value(void);
/* A reference the linker must resolve from the library, so the plugin needs it. */
__attribute__((used)) static int (*const g_needs_the_library)(void) = trust_dependency_value;
#endif

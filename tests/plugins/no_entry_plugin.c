/* A shared object that is not an etrt plugin: no et_plugin_entry. */
__attribute__((visibility("default"))) int not_a_plugin_entry(void) { return 7; }

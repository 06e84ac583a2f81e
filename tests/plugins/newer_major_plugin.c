/* Claims an ABI major the host does not speak; must be refused before init. */
#include "test_plugin_common.h"

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  (void)self;
  return host->error_create(ET_ERR_INTERNAL, "init of a newer-major plugin must never run");
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR + 1, 0, "test_newer_major", "1.0.0", "from the future", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}

// The handle a plugin receives in its init (and may keep, for logging): a small
// object the loader owns. Registrations made through it are staged here until
// init returns; the registry then takes them, or drops them if init failed.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "etrt/etrt.h"

namespace etrt::loader {

const char* kind_name(int32_t kind);  // "operator", "backend", "tracer" (by et_entry_kind)

// One name a plugin registered, with the descriptor it gave (its strings copied).
struct Registration {
  int32_t kind = ET_ENTRY_OPERATOR;
  std::string name;
  std::string variant;
  et_kernel_descriptor kernel{};
  et_backend_descriptor backend{};
  et_tracer_descriptor tracer{};
};

}  // namespace etrt::loader

// Defined here, opaque to plugins (plugin_api.h declares it incomplete).
//
// Registration is allowed only while the loader runs the plugin's init. The
// check comes before anything is copied or kept, under the handle's lock, so a
// plugin thread that registers after init (or several at once) gets
// ET_ERR_INVALID_STATE and changes nothing.
struct et_plugin_handle {
  explicit et_plugin_handle(std::string name) : plugin_name(std::move(name)) {}
  et_plugin_handle(const et_plugin_handle&) = delete;
  et_plugin_handle& operator=(const et_plugin_handle&) = delete;

  // The library's own name; set before init and never changed.
  const std::string plugin_name;

  // A hint for the registration functions' early refusal; stage() decides under the lock.
  bool in_init() const { return in_init_.load(std::memory_order_acquire); }
  // The one "registration outside init" check. Returns ET_OK, or a code with
  // *why_not set (ET_ERR_INVALID_STATE outside init, ET_ERR_ALREADY_EXISTS twice).
  // On success the descriptor's name (and variant) point at copies the handle
  // keeps until exit. Any thread; constant time per registration.
  int32_t stage(etrt::loader::Registration registration, std::string* why_not);

  // Used by the loader around init.
  void begin_init();
  std::vector<etrt::loader::Registration> end_init();

 private:
  std::mutex mutex_;                                // guards everything below
  std::atomic<bool> in_init_{false};                // written under mutex_
  std::vector<etrt::loader::Registration> staged_;
  std::unordered_set<std::string> staged_keys_;     // kind, name and variant of each staged registration
  std::deque<std::string> strings_;                 // stable addresses for copied names
};

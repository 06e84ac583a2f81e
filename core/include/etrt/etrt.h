/*
 * libetrt host API (C). The C++ layer in etrt.hpp wraps these functions; this
 * is everything libetrt exports.
 *
 * Conventions: functions that can fail return an int32_t et_status_code and,
 * when `error` is not NULL, store an et_error* the caller must release with
 * et_error_destroy. On failure, outputs are left untouched. Strings returned in
 * records are owned by libetrt and live until process exit unless stated.
 */
#ifndef ETRT_ETRT_H_
#define ETRT_ETRT_H_

#include <stddef.h>
#include <stdint.h>

#include "etrt/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define ET_API __declspec(dllexport)
#else
#define ET_API __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------ errors */

ET_API int32_t et_error_code(const et_error* error);
ET_API const char* et_error_message(const et_error* error);  /* owned by error */
ET_API const char* et_error_plugin(const et_error* error);   /* "" when raised by the host */
ET_API void et_error_destroy(et_error* error);               /* accepts NULL */
ET_API const char* et_status_name(int32_t code);             /* static string */

/* The ABI range this host offers plugins. */
ET_API void et_host_abi_version(uint32_t* major, uint32_t* min_minor, uint32_t* max_minor);
/* The function table plugins receive (also usable by in-process tests). */
ET_API const et_host_api* et_host_api_get(void);

/* ----------------------------------------------------------------- plugins */

/* Loads one plugin now: a .so path (with or without a manifest) or a manifest
 * .json path. Loading an already-loaded plugin again succeeds and does nothing. */
ET_API int32_t et_load_plugin(const char* path, et_error** error);

/* Adds a manifest file, or every *.json in a directory, to the manifests the
 * registry consults. Host-given manifests come before ETRT_PLUGIN_PATH and the
 * defaults. Loads nothing. */
ET_API int32_t et_add_manifest(const char* path, et_error** error);

/* Loads every plugin the known manifests declare (for tools and tests). Errors
 * of individual plugins are recorded as rejections; returns the first one. */
ET_API int32_t et_load_all_plugins(et_error** error);

typedef enum et_plugin_state {
  ET_PLUGIN_DECLARED = 0,   /* known from a manifest, not loaded */
  ET_PLUGIN_LOADED = 1,
  ET_PLUGIN_FAILED = 2      /* tried and refused; see `failure` */
} et_plugin_state;

typedef enum et_plugin_source {
  ET_SOURCE_EXPLICIT = 0,        /* et_load_plugin */
  ET_SOURCE_HOST_MANIFEST = 1,   /* et_add_manifest */
  ET_SOURCE_ENV = 2,             /* ETRT_PLUGIN_PATH */
  ET_SOURCE_DEFAULT = 3          /* manifests installed beside libetrt */
} et_plugin_source;

typedef struct et_plugin_record {
  size_t struct_size;
  const char* name;          /* from the plugin (or its manifest before loading) */
  const char* version;
  const char* description;
  const char* library_path;  /* absolute */
  const char* manifest_path; /* "" for a drop-in .so */
  int32_t state;             /* et_plugin_state */
  int32_t source;            /* et_plugin_source */
  int32_t priority;
  uint32_t abi_major;        /* negotiated; 0.0 until loaded */
  uint32_t abi_minor;
  uint32_t built_abi_major;  /* what the plugin was built against */
  uint32_t built_abi_minor;
  uint32_t load_count;       /* times the library was dlopen'ed and initialised (0 or 1) */
  const char* failure;       /* why loading failed, "" otherwise */
  const char* warnings;      /* newline-separated notes (extra exports, manifest drift) */
  /* Since 0.2: the CPU level of the library chosen among the manifest's variants
   * ("" when the manifest names none) and how it was chosen ("" without variants).
   * A caller built before them passes the shorter struct and gets the prefix. */
  const char* cpu_level;
  const char* cpu_level_reason;
} et_plugin_record;

ET_API size_t et_plugin_count(void);
/* Fills *out with the index-th plugin (stable order: discovery order). */
ET_API int32_t et_plugin_at(size_t index, et_plugin_record* out);

/* ---------------------------------------------------------------- registry */

typedef enum et_entry_kind {
  ET_ENTRY_OPERATOR = 0,
  ET_ENTRY_BACKEND = 1,
  ET_ENTRY_TRACER = 2
} et_entry_kind;

/* One provider of a name. Providers of a name are ordered: the first wins. */
typedef struct et_registry_entry {
  size_t struct_size;
  int32_t kind;              /* et_entry_kind */
  int32_t is_winner;         /* 1 for the provider lookups return */
  const char* name;          /* operator name / backend id / tracer name */
  const char* variant;       /* kernels: dtype variant or "" */
  const char* plugin;        /* plugin name */
  const char* plugin_path;
  int32_t priority;
  int32_t reserved;
  const char* reason;        /* for losers: why; "" for the winner */
} et_registry_entry;

ET_API size_t et_registry_count(int32_t kind);
ET_API int32_t et_registry_at(int32_t kind, size_t index, et_registry_entry* out);

/* A candidate the loader turned down: a file, a manifest or a plugin. */
typedef struct et_rejection {
  size_t struct_size;
  const char* path;
  const char* reason;
} et_rejection;

ET_API size_t et_rejection_count(void);
ET_API int32_t et_rejection_at(size_t index, et_rejection* out);

/* Manifests the registry consulted, in search order. */
ET_API size_t et_manifest_count(void);
ET_API const char* et_manifest_at(size_t index);

/* Looks a kernel up, loading the plugin that provides it on first need.
 * *out receives a copy of the winning descriptor; its strings live until exit.
 * Set out->struct_size to sizeof the struct first: descriptors grow with the
 * ABI's minor, and only that many bytes are written (struct_size then holds the
 * size written). An unset struct_size is ET_ERR_INVALID_ARGUMENT. out may be NULL
 * (only checks that a provider exists). Same for backends and tracers. */
ET_API int32_t et_find_kernel(const char* name, et_kernel_descriptor* out, et_error** error);
ET_API int32_t et_find_backend(const char* id, et_backend_descriptor* out, et_error** error);
ET_API int32_t et_find_tracer(const char* name, et_tracer_descriptor* out, et_error** error);

/* Without loading anything: which plugin would serve `name` -- the registered
 * winner, else the highest-priority declared plugin whose manifest lists it.
 * ET_ERR_NOT_FOUND when none would. */
ET_API int32_t et_registry_planned_provider(int32_t kind, const char* name, et_plugin_record* out);
/* 1 when `name` is an operator built into the executor (aten::sym_size.int,
 * executorch_prim::*), which no plugin needs to provide. */
ET_API int32_t et_operator_is_builtin(const char* name);
/* Who would serve `name`, without loading anything, by the rule a method
 * follows when it loads: an operator built into the executor first, then the
 * registry's planned provider. ET_OK with *builtin = 1 (*out untouched), or
 * *builtin = 0 and *out the plugin; ET_ERR_NOT_FOUND when nothing would. */
ET_API int32_t et_planned_server(int32_t kind, const char* name, int32_t* builtin, et_plugin_record* out);

/* The whole loader/registry state as JSON (what `etrt plugins --json` prints).
 * Caller frees with et_string_free. */
ET_API char* et_report_json(void);
ET_API void et_string_free(char* text);

/* ---------------------------------------------------------------- programs */

/* A loaded, fully verified .pte program. Methods keep their program alive, so
 * destroying a program while its methods run is safe. */
typedef struct et_program et_program;
typedef struct et_method et_method;

/* Reads and verifies a .pte (flatbuffer verifier plus bounds checks of every
 * index, offset and size). Loads no plugin. */
ET_API int32_t et_program_load_file(const char* path, et_program** out, et_error** error);
/* Copies the bytes. `origin` names the program in errors (may be NULL). */
ET_API int32_t et_program_load_bytes(const void* data, size_t size, const char* origin, et_program** out,
                                     et_error** error);
ET_API void et_program_destroy(et_program* program); /* accepts NULL */
/* Attaches weights kept outside the program: a .ptd file, as ExecuTorch writes
 * when a program is exported with external constants. The file is read and
 * verified now; methods loaded afterwards take their external tensors from it
 * (matched by name and checked against the program's declaration) and delegates
 * find their named data there. A program may have several data files. */
ET_API int32_t et_program_add_data_file(et_program* program, const char* path, et_error** error);
/* The same from bytes (copied). `origin` names the data in errors (may be NULL). */
ET_API int32_t et_program_add_data_bytes(et_program* program, const void* data, size_t size, const char* origin,
                                         et_error** error);
ET_API size_t et_program_method_count(const et_program* program);
ET_API const char* et_program_method_name(const et_program* program, size_t index); /* lives with the program */

/* What a method's input or output is, from the program alone. */
typedef struct et_value_info {
  size_t struct_size;
  int32_t tag;                      /* et_value_tag */
  int32_t dtype;                    /* tensors */
  int32_t rank;
  int32_t dynamism;                 /* et_shape_dynamism */
  int64_t sizes[ET_MAX_RANK];       /* the upper bound for dynamic shapes */
  uint8_t dim_order[ET_MAX_RANK];
  size_t nbytes;                    /* at the upper bound */
  /* Appended after 0.1: written only when struct_size has room for it. */
  int32_t memory_id;                /* planned buffer id (>= 1); 0: the caller provides the data */
} et_value_info;

typedef struct et_method_info {
  size_t struct_size;
  size_t num_inputs;
  size_t num_outputs;
  size_t num_operators;
  size_t num_delegates;
  size_t num_instructions;
  size_t num_planned_buffers;       /* memory ids 1..N */
  uint64_t planned_bytes;           /* sum of the planned buffers' sizes */
} et_method_info;

ET_API int32_t et_program_method_info(const et_program* program, const char* method, et_method_info* out,
                                      et_error** error);
ET_API int32_t et_program_io_info(const et_program* program, const char* method, int32_t is_output, size_t index,
                                  et_value_info* out, et_error** error);
/* "aten::add.out"; NULL when out of range. Strings live until exit. */
ET_API const char* et_program_operator_name(const et_program* program, const char* method, size_t index);
ET_API const char* et_program_delegate_id(const et_program* program, const char* method, size_t index);
/* The key (fully qualified name) of the index-th tensor of the method whose data lives outside the
 * program, in a .ptd file attached with et_program_add_data_file; NULL when out of range. A method
 * with any loads only once a file providing each is attached. Strings live until exit. */
ET_API const char* et_program_external_tensor(const et_program* program, const char* method, size_t index);

/* Resolves every operator and backend (loading the plugins that provide
 * them) and initialises delegates; fails naming everything missing. */
ET_API int32_t et_method_load(et_program* program, const char* name, et_method** out, et_error** error);
ET_API void et_method_destroy(et_method* method); /* accepts NULL */
ET_API size_t et_method_input_count(const et_method* method);
ET_API size_t et_method_output_count(const et_method* method);
/* Tensor inputs are copied into planned memory; an input the program does not
 * plan is aliased, and its data must outlive et_method_execute. Checks dtype,
 * rank and shape against the program. */
ET_API int32_t et_method_set_input(et_method* method, size_t index, const et_value* value, et_error** error);
ET_API int32_t et_method_execute(et_method* method, et_error** error);
/* Valid until the next execute or destroy. NULL when out of range. */
ET_API const et_value* et_method_output(const et_method* method, size_t index);

/* ----------------------------------------------------------------- tracing */

/* A session of a tracer plugin (e.g. "etdump"): records the runs of every
 * method it is set on, one run at a time, and yields results. Creating one
 * loads the tracer's plugin on first need; with no session nothing is loaded
 * and methods run untraced. Methods keep their session alive. */
typedef struct et_trace_session et_trace_session;

typedef struct et_trace_options {
  size_t struct_size;
  const char* label;         /* names the session in its output (e.g. the .pte path); may be NULL */
  size_t debug_buffer_size;  /* bytes for instruction outputs (ETDump debug events); 0: none */
} et_trace_options;

ET_API int32_t et_trace_session_create(const char* tracer, const et_trace_options* options, et_trace_session** out,
                                       et_error** error);
ET_API void et_trace_session_destroy(et_trace_session* session); /* accepts NULL */
/* Traces the method's next runs into `session`; NULL stops tracing it. */
ET_API int32_t et_method_set_trace_session(et_method* method, et_trace_session* session, et_error** error);
/* A result of the session: "etdump", "debug_buffer", "chrome_trace" or
 * "operator_summary" (TSV: name, plugin, calls, total ns). *data is allocated
 * by libetrt (free it with et_buffer_free); a too-small debug buffer fails with
 * ET_ERR_OUT_OF_MEMORY, saying how many bytes were needed. */
ET_API int32_t et_trace_session_result(et_trace_session* session, const char* what, void** data, size_t* size,
                                       et_error** error);
ET_API void et_buffer_free(void* data); /* accepts NULL */

/* Shorthands for one method: a new session of `tracer` set on it, and a result
 * of the method's current session (ET_ERR_INVALID_STATE when it has none). */
ET_API int32_t et_method_enable_tracer(et_method* method, const char* tracer, const et_trace_options* options,
                                       et_error** error);
ET_API int32_t et_method_trace_result(et_method* method, const char* what, void** data, size_t* size,
                                      et_error** error);

/* -------------------------------------------------------------- threadpool */

/* Threads of the one pool (the calling thread counts as one). Creates the pool
 * on first use: sized from ETRT_NUM_THREADS, else the physical core count. */
ET_API size_t et_threadpool_size(void);
/* Resizes the pool; safe while other threads submit work (they finish on the
 * old pool first). */
ET_API int32_t et_threadpool_set_size(size_t threads, et_error** error);
/* An identity for "the pool of this process": the same in every module. */
ET_API const void* et_threadpool_identity(void);
ET_API void et_parallel_for(size_t range, size_t grain, et_parallel_body body, void* context);

/* Identity of the registry, for checks that a process has exactly one. */
ET_API const void* et_registry_identity(void);

/* Version of libetrt itself ("0.1.0"). */
ET_API const char* et_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ETRT_ETRT_H_ */

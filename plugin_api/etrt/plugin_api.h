/*
 * etrt plugin ABI — the whole contract between libetrt (the host) and a plugin.
 *
 * A plugin is a shared object that exports exactly one symbol, et_plugin_entry
 * (see the end of this file). Everything else it needs from the host arrives in
 * the et_host_api function table. A plugin never links libetrt.
 *
 * Versioning
 *   ET_ABI_MAJOR changes when a field or function is removed, reordered or
 *   changes type: hosts refuse plugins of another major.
 *   ET_ABI_MINOR changes when fields are appended to a struct or functions are
 *   appended to a table: an older-minor plugin keeps working on a newer host, a
 *   newer-minor plugin works on an older host as long as the host can ignore
 *   what was added (every struct carries its struct_size, so each side reads
 *   only the prefix both know).
 *
 *   Fields added in minor N are guarded by `#if ET_ABI_TARGET_MINOR >= N`, so a
 *   plugin that must run on older hosts can define ET_ABI_TARGET_MINOR and get
 *   exactly that minor's structs.
 *
 * Changelog (one entry per minor)
 *   1.0  values, tensors, kernels, backends, host table, negotiation.
 *   1.1  tracers (et_tracer_descriptor, register_tracer); host services by name
 *        (service_acquire/service_release: the raw pthreadpool); kernel
 *        descriptors gain a dtype-specific variant key.
 *   1.2  every function pointer marked required or optional (backends may leave
 *        is_available and destroy NULL); host functions error_code and
 *        error_message (read an error the host returned), scratch_alloc (per-call
 *        scratch memory through et_exec_context), setting (ETRT_* settings read
 *        the way the host reads them); the kernel variant documented as reserved.
 *   1.3  tracing sessions: a tracer's descriptor gains session_create/destroy,
 *        begin/end/value per session and session_result (the host fetches
 *        ETDump, debug buffer, Chrome trace, operator summary); trace events
 *        gain the serving plugin and a thread index; host functions
 *        trace_clock_ns and trace_span (delegates report their own events).
 *   1.4  prepared kernels: a kernel descriptor gains prepare, run_prepared and
 *        release, so work that depends only on an instruction's arguments
 *        (broadcast plans, strides, loop shapes) is done once at method load.
 *   1.5  whole spans: a tracer's descriptor gains session_span (an
 *        instruction's span in one call, its names kept by the host until
 *        session_destroy, so a tracer may store the pointers and read the text
 *        only when a result is fetched).
 *   1.6  recorded runs: a tracer's descriptor gains session_records (the host
 *        stores each instruction's span as a raw et_trace_record, counter ticks
 *        and host-kept names, and hands the records of one or more runs over
 *        in batches, with the ticks-to-nanoseconds conversion).
 *
 * Required and optional
 *   Every function pointer below is marked. [required]: the host refuses a
 *   descriptor without it. [optional]: may be NULL; the comment says what the
 *   host does then. Host table entries are always filled by a host of the
 *   minor that added them; check struct_size (ET_HOST_HAS) before calling an
 *   entry newer than the oldest host a plugin supports.
 *
 * Ownership
 *   Every pointer field says who owns it and how long it lives. "Borrowed" means
 *   valid only for the duration of the call it was passed to.
 *
 * Errors
 *   Fallible functions return et_error*: NULL means success. Errors are created
 *   by the host (et_host_api.error_create) and owned by whoever receives them;
 *   the host tags every error a plugin returns with the plugin's identity.
 *   Plugins never throw across this boundary.
 */
#ifndef ETRT_PLUGIN_API_H_
#define ETRT_PLUGIN_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ version */

#define ET_ABI_MAJOR 1
#define ET_ABI_MINOR 6

#ifndef ET_ABI_TARGET_MINOR
#define ET_ABI_TARGET_MINOR ET_ABI_MINOR
#endif
#if ET_ABI_TARGET_MINOR > ET_ABI_MINOR
#error "ET_ABI_TARGET_MINOR is newer than this header"
#endif

/* The one symbol a plugin exports. */
#define ET_PLUGIN_ENTRY_SYMBOL "et_plugin_entry"

#if defined(_WIN32)
#define ET_PLUGIN_EXPORT __declspec(dllexport)
#else
#define ET_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------- errors */

typedef enum et_status_code {
  ET_OK = 0,
  ET_ERR_INVALID_ARGUMENT = 1, /* bad input: shape, dtype, count, value */
  ET_ERR_NOT_FOUND = 2,        /* a name nobody provides */
  ET_ERR_ABI_MISMATCH = 3,     /* versions the two sides cannot agree on */
  ET_ERR_OUT_OF_MEMORY = 4,
  ET_ERR_NOT_SUPPORTED = 5,    /* valid request this implementation cannot do */
  ET_ERR_INVALID_FILE = 6,     /* a file that is not what it claims to be */
  ET_ERR_LOAD_FAILED = 7,      /* dlopen or plugin init failed */
  ET_ERR_ALREADY_EXISTS = 8,
  ET_ERR_INTERNAL = 9,
  ET_ERR_INVALID_PROGRAM = 10, /* a .pte that fails verification */
  ET_ERR_INVALID_STATE = 11
} et_status_code;

/* Opaque error object: code + message + the plugin that raised it. Created by
 * the host, owned by the receiver, released with et_host_api.error_destroy (or
 * et_error_destroy on the host side). */
typedef struct et_error et_error;

/* Opaque: the host's record of one loaded plugin. Passed to init; plugins pass
 * it back when registering. Lives until process exit (plugins are not
 * unloaded while anything they created may be alive). */
typedef struct et_plugin_handle et_plugin_handle;

/* Opaque: per-call context of a kernel or delegate execution. Borrowed, valid
 * only during the call. Read it through the host table: scratch_alloc (1.2). */
typedef struct et_exec_context et_exec_context;

/* Opaque: the named data (weights by key) of the program a delegate belongs to.
 * Borrowed for the duration of et_backend_descriptor.init. */
typedef struct et_named_data et_named_data;

/* ------------------------------------------------------------------- values */

/* Element types: ExecuTorch's ScalarType codes (same numbers). */
typedef enum et_dtype {
  ET_DTYPE_UINT8 = 0,
  ET_DTYPE_INT8 = 1,
  ET_DTYPE_INT16 = 2,
  ET_DTYPE_INT32 = 3,
  ET_DTYPE_INT64 = 4,
  ET_DTYPE_FLOAT16 = 5,
  ET_DTYPE_FLOAT32 = 6,
  ET_DTYPE_FLOAT64 = 7,
  ET_DTYPE_BOOL = 11,
  ET_DTYPE_BFLOAT16 = 15
} et_dtype;

typedef enum et_shape_dynamism {
  ET_SHAPE_STATIC = 0,
  ET_SHAPE_DYNAMIC_BOUND = 1,   /* may shrink/grow within its capacity */
  ET_SHAPE_DYNAMIC_UNBOUND = 2
} et_shape_dynamism;

#define ET_MAX_RANK 16

/* A tensor. The host owns the struct and its arrays; kernels may write `data`
 * (outputs) and change the shape only through et_host_api.tensor_resize. */
typedef struct et_tensor {
  size_t struct_size;
  int32_t dtype;          /* et_dtype */
  int32_t rank;           /* 0..ET_MAX_RANK */
  const int64_t* sizes;   /* [rank], host-owned */
  const uint8_t* dim_order; /* [rank], outermost dim first; host-owned */
  const int64_t* strides; /* [rank], in elements, host-owned */
  void* data;             /* host-owned (planned memory or constants); may be NULL when numel == 0 */
  size_t nbytes;          /* bytes of the current shape */
  size_t capacity_bytes;  /* bytes available at `data` */
  int32_t dynamism;       /* et_shape_dynamism */
  int32_t is_const;       /* 1 when data is a read-only constant */
} et_tensor;

typedef enum et_value_tag {
  ET_VALUE_NULL = 0,
  ET_VALUE_INT = 1,
  ET_VALUE_BOOL = 2,
  ET_VALUE_DOUBLE = 3,
  ET_VALUE_STRING = 4,
  ET_VALUE_TENSOR = 5,
  ET_VALUE_INT_LIST = 6,
  ET_VALUE_DOUBLE_LIST = 7,
  ET_VALUE_BOOL_LIST = 8,
  ET_VALUE_TENSOR_LIST = 9,
  ET_VALUE_OPTIONAL_TENSOR_LIST = 10
} et_value_tag;

/* One value of a method. Host-owned. Which fields mean something depends on
 * `tag`:
 *   INT, BOOL        as_int (BOOL: 0 or 1)
 *   DOUBLE           as_double
 *   STRING           items: const char[count], not NUL-terminated
 *   TENSOR           tensor
 *   INT_LIST         items: const int64_t[count], materialised by the host
 *                    before each call from value_indices (entries may be
 *                    symbolic ints that change between calls)
 *   DOUBLE_LIST      items: const double[count]
 *   BOOL_LIST        items: const uint8_t[count]
 *   TENSOR_LIST      items: et_tensor* const[count]
 *   OPTIONAL_TENSOR_LIST items: et_tensor* const[count], NULL entries = None
 * value_indices: for lists that ExecuTorch boxes (INT_LIST, TENSOR_LIST,
 * OPTIONAL_TENSOR_LIST), the positions of the elements in the method's value
 * table; NULL otherwise. */
typedef struct et_value {
  size_t struct_size;
  int32_t tag;            /* et_value_tag */
  int32_t reserved;
  int64_t as_int;
  double as_double;
  et_tensor* tensor;
  const void* items;
  size_t count;
  const int32_t* value_indices;
} et_value;

/* ------------------------------------------------------------------ kernels */

/* Runs one instruction. args: borrowed, the instruction's arguments exactly as
 * the program lists them: every schema argument in order (out arguments last),
 * then the return value(s) -- for a single-output out variant the out tensor
 * appears twice; several outputs are followed by a TensorList of them.
 * ctx: borrowed; may be NULL when a host tool calls a kernel outside a method
 * (scratch_alloc then returns NULL). Returns NULL or an error. */
typedef et_error* (*et_kernel_fn)(void* user_data, et_exec_context* ctx,
                                  et_value* const* args, size_t nargs);

#if ET_ABI_TARGET_MINOR >= 4
/* 1.4: prepared kernels. A method calls prepare once per instruction of the
 * kernel when it loads (after memory planning and constant folding), with the
 * instruction's arguments: the very array, count and et_value pointers every later call of that
 * instruction receives, tensors at the program's shapes (the upper bound of a
 * dynamic shape), data possibly not set yet. *out_state = NULL declines: the
 * host then calls fn for that instruction. Otherwise the state is the
 * plugin's until release, and the host calls run_prepared(state, ...) instead
 * of fn on every call of the instruction; release when the method is
 * destroyed. An error from prepare fails the method's load (the host names the
 * instruction and its operator).
 *
 * Why a second entry and not the state in et_exec_context: fn keeps its
 * meaning for every caller that has no method (tools, tests, older hosts), the
 * state arrives in a register instead of through a host call per operator,
 * and the executor writes nothing per instruction.
 *
 * The state describes the arguments as they were when it was made. Shapes of
 * dynamic tensors may change between calls, data pointers may change, and a
 * value may be replaced by another (control flow): run_prepared must check
 * what its plan depends on and, when it changed, redo the plan or take fn's
 * path. The host never runs one instruction on two threads at once, so
 * run_prepared may update its state without locking. */
typedef et_error* (*et_kernel_prepare_fn)(void* user_data, et_value* const* args, size_t nargs,
                                          void** out_state);
typedef et_error* (*et_kernel_run_prepared_fn)(void* user_data, void* state, et_exec_context* ctx,
                                               et_value* const* args, size_t nargs);
typedef void (*et_kernel_release_fn)(void* user_data, void* state);
#endif

typedef struct et_kernel_descriptor {
  size_t struct_size;
  const char* name;       /* "aten::add.out"; copied by the host at registration */
  et_kernel_fn fn;        /* [required] */
  void* user_data;        /* plugin-owned; must outlive the process' use of the kernel */
#if ET_ABI_TARGET_MINOR >= 1
  /* 1.1, reserved: "" or NULL for the generic kernel. The host copies and
   * reports it (`etrt plugins --json`) and keeps providers of different
   * variants apart, but never selects a kernel by it: methods always run the
   * generic kernel. A kernel dispatches on its inputs' dtypes itself. */
  const char* variant;
#endif
#if ET_ABI_TARGET_MINOR >= 4
  /* 1.4 (read only when struct_size covers them; see et_kernel_prepare_fn). */
  et_kernel_prepare_fn prepare;           /* [optional] NULL: the host always calls fn */
  et_kernel_run_prepared_fn run_prepared; /* [required with prepare] */
  et_kernel_release_fn release;           /* [required with prepare]; state is never NULL */
#endif
} et_kernel_descriptor;

/* ----------------------------------------------------------------- backends */

typedef struct et_compile_spec {
  size_t struct_size;
  const char* key;        /* borrowed */
  const void* value;      /* borrowed */
  size_t value_size;
} et_compile_spec;

typedef struct et_backend_init_args {
  size_t struct_size;
  const void* processed;        /* the delegate blob; borrowed, valid during init only */
  size_t processed_size;
  const et_compile_spec* compile_specs; /* borrowed [num_compile_specs] */
  size_t num_compile_specs;
  et_named_data* named_data;    /* borrowed; read through et_host_api.named_data_get */
} et_backend_init_args;

typedef struct et_backend_descriptor {
  size_t struct_size;
  const char* id;         /* "XnnpackBackend"; copied by the host */
  void* user_data;        /* plugin-owned */
  /* [optional] 1 when the backend can run on this machine. NULL (hosts >= 1.2):
   * always available. */
  int32_t (*is_available)(void* user_data);
  /* [required] Compiles one delegate blob. *out_handle is owned by the plugin
   * until destroy. */
  et_error* (*init)(void* user_data, const et_backend_init_args* args, void** out_handle);
  /* [required] Runs a compiled delegate; args as for et_kernel_fn. */
  et_error* (*execute)(void* user_data, void* handle, et_exec_context* ctx,
                       et_value* const* args, size_t nargs);
  /* [optional] Releases a handle from init. Accepts NULL. NULL (hosts >= 1.2):
   * handles need no release. */
  void (*destroy)(void* user_data, void* handle);
} et_backend_descriptor;

/* ------------------------------------------------------------------ tracers */

#if ET_ABI_TARGET_MINOR >= 1
typedef enum et_trace_kind {
  ET_TRACE_METHOD = 0,
  ET_TRACE_OPERATOR = 1,
  ET_TRACE_DELEGATE = 2,
  ET_TRACE_CUSTOM = 3
} et_trace_kind;

typedef struct et_trace_event {
  size_t struct_size;
  int32_t kind;           /* et_trace_kind (1.3: also et_trace_kind_1_3) */
  int32_t reserved;
  const char* name;       /* borrowed: operator name, delegate id, method name */
  int64_t id;             /* instruction index (operators/delegates), -1 otherwise */
  int64_t chain_id;       /* -1 when not applicable */
  int64_t debug_handle;   /* from the program, -1 when absent */
  uint64_t timestamp_ns;  /* monotonic clock of the host */
#if ET_ABI_TARGET_MINOR >= 3
  /* 1.3 (read only when struct_size covers them): */
  const char* plugin;     /* borrowed: the plugin serving the instruction, "" for built-ins and methods */
  uint32_t thread;        /* 0: the thread that runs the method; k > 0: the pool's k-th other thread seen */
  uint32_t reserved2;
#endif
} et_trace_event;

#if ET_ABI_TARGET_MINOR >= 3
/* 1.3: kinds beyond et_trace_kind. */
typedef enum et_trace_kind_1_3 {
  ET_TRACE_DELEGATE_EVENT = 4, /* reported by a delegate from inside its call (trace_span) */
  ET_TRACE_WORKER = 5          /* a chunk of a parallel_for on one thread; id: the instruction */
} et_trace_kind_1_3;

/* 1.3: what the host asks of a new session. Borrowed during session_create. */
typedef struct et_trace_session_args {
  size_t struct_size;
  const char* label;          /* names the session in its output, e.g. the program's file */
  size_t debug_buffer_size;   /* bytes for debug values; 0: record no debug values */
} et_trace_session_args;

/* 1.3: receives a session's result in pieces; data borrowed during the call. */
typedef void (*et_trace_sink)(void* sink_context, const void* data, size_t size);
#endif

#if ET_ABI_TARGET_MINOR >= 6
/* 1.6: one span as the host recorded it. start and end are counter ticks,
 * converted with the batch's anchor and rate, or nanoseconds of the host's
 * clock (trace_clock_ns) when flags has ET_TRACE_RECORD_NS or the batch's
 * ns_per_tick is 0. A batch's records are records[0].struct_size bytes apart
 * (a newer host's records may be longer: read the prefix you know). */
typedef struct et_trace_record {
  size_t struct_size;
  uint64_t start;
  uint64_t end;
  const char* name;    /* host-owned until session_destroy (instructions; the method's name for ET_TRACE_METHOD) */
  const char* plugin;  /* host-owned until session_destroy; "" for built-ins and methods */
  int32_t kind;        /* ET_TRACE_OPERATOR, ET_TRACE_DELEGATE, ET_TRACE_DELEGATE_EVENT or ET_TRACE_METHOD (the run; last of its run) */
  int32_t id;          /* instruction index (a delegate event's: its delegate call's); -1 for ET_TRACE_METHOD */
  int32_t chain_id;    /* the instruction's chain; -1 for ET_TRACE_METHOD */
  uint32_t flags;      /* ET_TRACE_RECORD_NS */
  /* ET_TRACE_DELEGATE_EVENT only (any value for other kinds): the delegate's id
   * for the event (trace_span's delegate_debug_id), -1 when its name is the id.
   * A delegate event's record is in nanoseconds and comes before the record of
   * the delegate call it happened in (records are in the order spans ended);
   * its name, host-owned until session_destroy, is a copy of the delegate's. */
  int64_t debug_handle;
} et_trace_record;

#define ET_TRACE_RECORD_NS 1u  /* start/end are nanoseconds, not ticks */
#define ET_TRACE_BATCH_IN_RUN 1u /* the batch ends inside a run: the calls until the next batch belong to it */

/* 1.6: records of one or more method runs in the order the spans ended. A
 * run's records end with its own (ET_TRACE_METHOD); the first record of a
 * session, and each record after an ET_TRACE_METHOD one (in this batch or a
 * later one), is the first of a new run. flags has ET_TRACE_BATCH_IN_RUN when
 * a run has begun and not ended by the batch's last record (possibly with no
 * record yet: the batch may be empty): a worker chunk or event that follows as
 * a begin/end pair belongs to it. A tick t is (anchor_ns + (t - anchor_ticks) *
 * ns_per_tick) ns on the host's clock, for every record of the batch (also
 * ticks before anchor_ticks: the rate is the same over the batch). A tracer
 * may keep the numbers and convert when it needs nanoseconds. */
typedef struct et_trace_batch {
  size_t struct_size;
  const et_trace_record* records; /* borrowed during the call */
  size_t count;
  uint64_t anchor_ticks;
  uint64_t anchor_ns;
  double ns_per_tick;  /* 0: every record's start/end are nanoseconds */
  uint32_t flags;      /* ET_TRACE_BATCH_IN_RUN */
  uint32_t reserved;
} et_trace_batch;
#endif

/* A tracer. Before 1.3: a process-wide listener (begin/end only; the host never
 * calls one). From 1.3, a session-capable tracer: the host creates a session
 * per set of traced method runs (a host enables it for one or more methods),
 * calls the session_* functions while those methods run and fetches the
 * result. The host serialises calls per session (one method run at a time),
 * always on one thread at a time, so a session needs no locking. */
typedef struct et_tracer_descriptor {
  size_t struct_size;
  const char* name;       /* copied by the host */
  void* user_data;        /* plugin-owned */
  void (*begin)(void* user_data, const et_trace_event* event); /* [required] */
  void (*end)(void* user_data, const et_trace_event* event);   /* [required] */
#if ET_ABI_TARGET_MINOR >= 3
  /* [optional] 1.3. NULL: the tracer has no sessions and cannot be enabled for a
   * method. *out_session is plugin-owned until session_destroy. */
  et_error* (*session_create)(void* user_data, const et_trace_session_args* args, void** out_session);
  /* [required with session_create] */
  void (*session_destroy)(void* user_data, void* session);
  /* [required with session_create] Spans: begin and end of the method run
   * (ET_TRACE_METHOD; begins a new run block), of each instruction
   * (ET_TRACE_OPERATOR), of each delegate call (ET_TRACE_DELEGATE), of events a
   * delegate reports and of worker chunks. Spans nest; worker chunks and
   * delegate events arrive after the work, with their own timestamps. */
  void (*session_begin)(void* session, const et_trace_event* event);
  void (*session_end)(void* session, const et_trace_event* event);
  /* [optional] A value after the instruction `event` ran: a kernel's output,
   * every argument of a delegate call (inputs and outputs cannot be told
   * apart), and with is_method_output = 1 each output of the method at the end
   * of the run. value borrowed during the call. */
  void (*session_value)(void* session, const et_trace_event* event, const et_value* value,
                        int32_t is_method_output);
  /* [required with session_create] Writes the result named `what` to sink:
   * "etdump", "debug_buffer", "chrome_trace", "operator_summary" (TSV lines:
   * name, plugin, calls, total ns). Errors: ET_ERR_NOT_FOUND for an unknown
   * `what`, ET_ERR_OUT_OF_MEMORY when the debug buffer was too small (the
   * message says how many bytes it needed). */
  et_error* (*session_result)(void* session, const char* what, et_trace_sink sink, void* sink_context);
#endif
#if ET_ABI_TARGET_MINOR >= 5
  /* [optional] 1.5. The whole span of one instruction (ET_TRACE_OPERATOR,
   * ET_TRACE_DELEGATE) in one call, after it ran: from start_ns to
   * event->timestamp_ns. A host that has it calls it instead of session_begin
   * and session_end for instructions (methods, delegate events and worker chunks
   * still arrive as begin/end pairs, in the same order as before). event->name
   * and event->plugin are owned by the host and stay valid until session_destroy
   * of this session: the tracer may keep the pointers (equal text may come at
   * different addresses). NULL: instructions arrive as begin/end pairs. */
  void (*session_span)(void* session, const et_trace_event* event, uint64_t start_ns);
#endif
#if ET_ABI_TARGET_MINOR >= 6
  /* [optional] 1.6. The spans of runs' instructions and of the runs themselves,
   * recorded by the host as raw records and handed over in batches (see
   * et_trace_batch). Records of successive runs may wait in the host's buffer:
   * they are handed over when it fills, before any other call to the session
   * (a worker chunk, an event reported outside a delegate call, session_result) and before
   * session_destroy, so calls stay in the order session_span would have made
   * them and a result always includes every run so far. A host that has it
   * calls it instead of session_span and the ET_TRACE_METHOD begin/end pair, except in sessions
   * that record values (those keep the 1.5 calls). The events a delegate reports
   * during its call are records too (ET_TRACE_DELEGATE_EVENT); worker chunks
   * stay begin/end pairs. batch borrowed during the
   * call; its records' names as session_span's. NULL: the 1.5 calls. */
  void (*session_records)(void* session, const et_trace_batch* batch);
#endif
} et_tracer_descriptor;
#endif

/* ------------------------------------------------------------------ host table */

typedef enum et_log_level {
  ET_LOG_TRACE = 0, ET_LOG_DEBUG = 1, ET_LOG_INFO = 2,
  ET_LOG_WARN = 3, ET_LOG_ERROR = 4
} et_log_level;

/* Body of a parallel loop: handles [begin, end). */
typedef void (*et_parallel_body)(void* context, size_t begin, size_t end);

#if ET_ABI_TARGET_MINOR >= 1
/* A borrowed host service. While leased, the service stays valid (the thread
 * pool is not resized under a lease). `generation` changes whenever the
 * service object is replaced, so plugins can drop state tied to an old one.
 * A lease may be released on any thread (releasing it twice is harmless). Hold
 * one only for the call that took it: a resize waits for held leases at most
 * 5 s, then fails naming how long one has been held. */
typedef struct et_service_lease {
  size_t struct_size;
  void* handle;           /* e.g. pthreadpool_t for "pthreadpool" */
  uint64_t generation;
  uint64_t reserved;      /* host bookkeeping; do not touch */
} et_service_lease;
#endif

/* Functions the host lends to a plugin. Host-owned, valid for the process'
 * lifetime. Append-only: new functions go at the end with a minor bump. */
typedef struct et_host_api {
  size_t struct_size;
  uint32_t abi_major;     /* what the host speaks */
  uint32_t abi_minor;

  /* Registration: only during the plugin's init. The host copies the
   * descriptor (not user_data). */
  et_error* (*register_kernel)(et_plugin_handle* self, const et_kernel_descriptor* kernel);
  et_error* (*register_backend)(et_plugin_handle* self, const et_backend_descriptor* backend);

  /* Errors. message is copied. */
  et_error* (*error_create)(int32_t code, const char* message);
  void (*error_destroy)(et_error* error);   /* accepts NULL */

  void (*log)(et_plugin_handle* self, int32_t level, const char* message);

  /* Aligned memory; alignment is a power of two. free accepts NULL. */
  void* (*alloc)(size_t size, size_t alignment);
  void (*free)(void* ptr);

  /* Changes a tensor's shape within its capacity (recomputes strides in its
   * dim order). Fails for static tensors whose shape would change. */
  et_error* (*tensor_resize)(et_tensor* tensor, const int64_t* sizes, size_t rank);

  /* Runs body over [0, range) on the host thread pool in chunks of at least
   * `grain` items; returns when all chunks ran. Safe to call from any thread. */
  void (*parallel_for)(size_t range, size_t grain, et_parallel_body body, void* context);
  size_t (*num_threads)(void);

  /* Named data of a program (weights by key). *data borrowed while the
   * program lives. */
  et_error* (*named_data_get)(et_named_data* map, const char* key,
                              const void** data, size_t* size);

#if ET_ABI_TARGET_MINOR >= 1
  et_error* (*register_tracer)(et_plugin_handle* self, const et_tracer_descriptor* tracer);
  /* Leases a service by name ("pthreadpool"). Release every lease. */
  et_error* (*service_acquire)(const char* name, et_service_lease* lease);
  void (*service_release)(et_service_lease* lease);
#endif

#if ET_ABI_TARGET_MINOR >= 2
  /* 1.2: an error's code (et_status_code) and message, e.g. of an error the
   * host returned from named_data_get. The message is borrowed until the
   * error is destroyed. NULL error: ET_OK and "". */
  int32_t (*error_code)(const et_error* error);
  const char* (*error_message)(const et_error* error);

  /* 1.2: scratch memory for the current kernel or delegate call: valid until
   * the call returns, then reused (the host resets it after every
   * instruction; a steady run allocates nothing). Call it from the thread the
   * host called the kernel on, not from parallel_for bodies. alignment: a
   * power of two up to 4096 (0 means 1). NULL when ctx is NULL, alignment is
   * invalid or memory runs out. Do not free the result. */
  void* (*scratch_alloc)(et_exec_context* ctx, size_t bytes, size_t alignment);

  /* 1.2: a setting from the process environment, read as the host reads its
   * own: only names beginning with "ETRT_", and never in a setuid or setgid
   * process (secure_getenv). NULL when unset or refused. The string is the
   * environment's: copy it if it must outlive a change to the environment. */
  const char* (*setting)(et_plugin_handle* self, const char* name);
#endif

#if ET_ABI_TARGET_MINOR >= 3
  /* 1.3: the host's monotonic clock in nanoseconds (the tracers' time base). */
  uint64_t (*trace_clock_ns)(void);
  /* 1.3: a delegate reports a span it measured inside its execute call
   * (start/end from trace_clock_ns): recorded as an ET_TRACE_DELEGATE_EVENT
   * nested in the delegate call. name borrowed. Call it from the thread the
   * host called execute on. Returns 0 and does nothing when the call is not
   * traced (check once with start_ns == end_ns == 0 to skip measuring). */
  int32_t (*trace_span)(et_exec_context* ctx, const char* name, int64_t delegate_debug_id, uint64_t start_ns,
                        uint64_t end_ns);
#endif
} et_host_api;

/* 1 when `host` has the table entry `field` (its struct_size covers it). */
#define ET_HOST_HAS(host, field) \
  ((host) != NULL && (host)->struct_size >= offsetof(et_host_api, field) + sizeof((host)->field))

#if ET_ABI_TARGET_MINOR >= 2
/* A setting through host->setting, or NULL on hosts older than 1.2 (which
 * have no such entry: a plugin then runs with its defaults). */
static inline const char* et_host_setting(const et_host_api* host, et_plugin_handle* self, const char* name) {
  if (!ET_HOST_HAS(host, setting) || host->setting == NULL) return NULL;
  return host->setting(self, name);
}

/* An error's message, or `fallback` on hosts older than 1.2. */
static inline const char* et_host_error_message(const et_host_api* host, const et_error* error,
                                                const char* fallback) {
  if (!ET_HOST_HAS(host, error_message) || host->error_message == NULL) return fallback;
  return host->error_message(error);
}

/* Scratch memory for the current call, or NULL on hosts older than 1.2 (the
 * plugin then allocates with host->alloc and frees it itself). */
static inline void* et_host_scratch_alloc(const et_host_api* host, et_exec_context* ctx, size_t bytes,
                                          size_t alignment) {
  if (!ET_HOST_HAS(host, scratch_alloc) || host->scratch_alloc == NULL) return NULL;
  return host->scratch_alloc(ctx, bytes, alignment);
}
#endif

/* ------------------------------------------------------------------ plugin */

/* Static description of a plugin, returned by the entry point. Plugin-owned,
 * must stay valid while the plugin is loaded. */
typedef struct et_plugin_info {
  size_t struct_size;
  uint32_t abi_major;     /* the ABI the plugin was built against */
  uint32_t abi_minor;
  const char* name;       /* identity, e.g. "kernels_optimized" */
  const char* version;    /* the plugin's own version, e.g. "0.1.0" */
  const char* description;
  /* [required] Registers what the plugin provides through host. On error
   * nothing the plugin registered is kept. */
  et_error* (*init)(const et_host_api* host, et_plugin_handle* self);
} et_plugin_info;

/* Host -> plugin: the range of ABI levels the host speaks (same major; the
 * host accepts any minor of that major, ignoring what it does not know). */
typedef struct et_abi_offer {
  size_t struct_size;
  uint32_t major;
  uint32_t min_minor;
  uint32_t max_minor;
} et_abi_offer;

/* Plugin -> host. Host-allocated; the plugin writes fields within
 * struct_size only. */
typedef struct et_abi_answer {
  size_t struct_size;
  uint32_t major;         /* the level the plugin will speak */
  uint32_t minor;
  const et_plugin_info* info; /* plugin-owned, static */
} et_abi_answer;

/* The entry point. Must not do anything but fill `answer`: the host checks the
 * versions before any other plugin code runs. Returns ET_OK, or
 * ET_ERR_ABI_MISMATCH with answer holding the plugin's own version. */
typedef int32_t (*et_plugin_entry_fn)(const et_abi_offer* offer, et_abi_answer* answer);

/* Defined by each plugin, exported (ET_PLUGIN_EXPORT), nothing else exported. */
int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer);

/* The negotiation every plugin performs, for use in its entry point: speak the
 * highest minor both sides know, or refuse with the plugin's own version. */
static inline int32_t et_plugin_answer_offer(const et_abi_offer* offer, et_abi_answer* answer,
                                             const et_plugin_info* info) {
  if (offer == NULL || answer == NULL || answer->struct_size < sizeof(size_t) + 2 * sizeof(uint32_t))
    return ET_ERR_INVALID_ARGUMENT;
  answer->major = info->abi_major;
  answer->minor = info->abi_minor;
  if (answer->struct_size >= offsetof(et_abi_answer, info) + sizeof(answer->info)) answer->info = info;
  if (offer->major != info->abi_major) return ET_ERR_ABI_MISMATCH;
  if (info->abi_minor < offer->min_minor) return ET_ERR_ABI_MISMATCH;
  if (info->abi_minor > offer->max_minor) answer->minor = offer->max_minor;
  return ET_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* ETRT_PLUGIN_API_H_ */

/* A session tracer that writes down what the host calls, one line per call:
 * "B|E|S kind id name start end" (begin, end, ABI 1.5 session_span) and, for
 * ABI 1.6 session_records, "N 0 -1 run 0 0" where a run begins (its first
 * record, or a batch with ET_TRACE_BATCH_IN_RUN and no run open), one
 * "R kind id name start end" per record (times converted to ns here) and
 * "K 0 -1 batch count 0" after each batch's records (count: its records). Built
 * three times: at ABI 1.4 (test_pairs_tracer, no session_span: the host must
 * send instructions as begin/end pairs), at 1.5 (test_spans_tracer) and at 1.6
 * (test_records_tracer). Result "calls" is the log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrt/plugin_api.h"

#ifndef TRACER_NAME
#define TRACER_NAME "test_spans_tracer"
#endif

static const et_host_api* g_host = NULL;

typedef struct Log {
  char* text;
  size_t size, capacity;
  int in_run; /* session_records: a run has begun and its ET_TRACE_METHOD record has not come */
} Log;

static void log_line(Log* log, char what, int kind, long long id, const char* name, uint64_t start, uint64_t end) {
  /* One word per field: a delegate's event names have spaces ("XNNPACK runtime 0: ..."). */
  char word[256];
  size_t w = 0;
  for (; name != NULL && name[w] != '\0' && w + 1 < sizeof word; ++w) word[w] = name[w] == ' ' ? '_' : name[w];
  word[w] = '\0';
  char line[512];
  int n = snprintf(line, sizeof line, "%c %d %lld %s %llu %llu\n", what, kind, id, w > 0 ? word : "-",
                   (unsigned long long)start, (unsigned long long)end);
  if (n < 0) return;
  size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  if (log->size + len + 1 > log->capacity) {
    size_t capacity = (log->capacity + len + 1) * 2;
    char* text = (char*)realloc(log->text, capacity);
    if (text == NULL) return;
    log->text = text;
    log->capacity = capacity;
  }
  memcpy(log->text + log->size, line, len);
  log->size += len;
}

static void log_call(Log* log, char what, const et_trace_event* event, uint64_t start, uint64_t end) {
  log_line(log, what, (int)event->kind, (long long)event->id, event->name, start, end);
}

static void ignore_event(void* user_data, const et_trace_event* event) { (void)user_data; (void)event; }

static et_error* session_create(void* user_data, const et_trace_session_args* args, void** out_session) {
  (void)user_data;
  (void)args;
  Log* log = (Log*)calloc(1, sizeof(Log));
  if (log == NULL) return g_host->error_create(ET_ERR_OUT_OF_MEMORY, "span tracer: no memory");
  *out_session = log;
  return NULL;
}

static void session_destroy(void* user_data, void* session) {
  (void)user_data;
  free(((Log*)session)->text);
  free(session);
}

static void session_begin(void* session, const et_trace_event* event) {
  log_call((Log*)session, 'B', event, event->timestamp_ns, 0);
}
static void session_end(void* session, const et_trace_event* event) {
  log_call((Log*)session, 'E', event, 0, event->timestamp_ns);
}
#if ET_ABI_TARGET_MINOR >= 5
static void session_span(void* session, const et_trace_event* event, uint64_t start_ns) {
  log_call((Log*)session, 'S', event, start_ns, event->timestamp_ns);
}
#endif

#if ET_ABI_TARGET_MINOR >= 6
static uint64_t record_ns(const et_trace_batch* batch, uint64_t reading, uint32_t flags) {
  if ((flags & ET_TRACE_RECORD_NS) != 0 || batch->ns_per_tick <= 0) return reading;
  /* signed: records of earlier runs may precede the batch's anchor */
  double delta = (double)(int64_t)(reading - batch->anchor_ticks);
  return (uint64_t)((double)batch->anchor_ns + delta * batch->ns_per_tick);
}

static void session_records(void* session, const et_trace_batch* batch) {
  Log* log = (Log*)session;
  const char* bytes = (const char*)batch->records;
  for (size_t i = 0; i < batch->count; ++i) {
    const et_trace_record* r = (const et_trace_record*)(bytes + i * batch->records[0].struct_size);
    if (!log->in_run) log_line(log, 'N', 0, -1, "run", 0, 0);
    log->in_run = r->kind != ET_TRACE_METHOD;
    log_line(log, 'R', r->kind, r->id, r->name, record_ns(batch, r->start, r->flags), record_ns(batch, r->end, r->flags));
  }
  if ((batch->flags & ET_TRACE_BATCH_IN_RUN) != 0 && !log->in_run) {
    log_line(log, 'N', 0, -1, "run", 0, 0);
    log->in_run = 1;
  }
  log_line(log, 'K', 0, -1, "batch", (uint64_t)batch->count, 0);
}
#endif

static et_error* session_result(void* session, const char* what, et_trace_sink sink, void* sink_context) {
  if (strcmp(what, "calls") != 0) return g_host->error_create(ET_ERR_NOT_FOUND, "span tracer: only 'calls'");
  Log* log = (Log*)session;
  sink(sink_context, log->text ? log->text : "", log->size);
  return NULL;
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  et_tracer_descriptor tracer;
  memset(&tracer, 0, sizeof tracer);
  tracer.struct_size = sizeof tracer;
  tracer.name = TRACER_NAME;
  tracer.begin = ignore_event;
  tracer.end = ignore_event;
  tracer.session_create = session_create;
  tracer.session_destroy = session_destroy;
  tracer.session_begin = session_begin;
  tracer.session_end = session_end;
  tracer.session_result = session_result;
#if ET_ABI_TARGET_MINOR >= 5
  tracer.session_span = session_span;
#endif
#if ET_ABI_TARGET_MINOR >= 6
  tracer.session_records = session_records;
#endif
  return host->register_tracer(self, &tracer);
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_TARGET_MINOR, TRACER_NAME, "1.0.0", "test span tracer", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}

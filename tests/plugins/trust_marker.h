/* The trust tests' witness: code that leaves the file $ETRT_TRUST_MARKER_DIR/<name>
 * when it runs, so a test can tell whether a refused library's code ran. */
#ifndef ETRT_TEST_TRUST_MARKER_H_
#define ETRT_TEST_TRUST_MARKER_H_

#include <stdio.h>
#include <stdlib.h>

static inline void trust_leave_marker(const char* name) {
  const char* dir = getenv("ETRT_TRUST_MARKER_DIR");
  if (dir == NULL) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* marker = fopen(path, "w");
  if (marker != NULL) fclose(marker);
}

#endif

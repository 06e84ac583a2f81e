// Validator for the small subset of JSON Schema (draft 2020-12) that plugin
// manifests use. Violations carry the source line so errors can be located.
#pragma once

#include <string>
#include <vector>

#include "loader/json.h"

namespace etrt::loader {

struct SchemaViolation {
  int line = 0;
  // Path like "provides.operators[3]" ("" for the root). For a missing
  // required property this is the path of the missing property.
  std::string field;
  std::string message;
};

// Supported keywords: type, required, properties, additionalProperties, items,
// enum, const, minimum, maximum, minLength, maxLength, pattern, minItems,
// maxItems, uniqueItems; boolean schemas. Other keywords are ignored.
// Violations are returned in document order (sorted by line, stable).
std::vector<SchemaViolation> validate_json(const JsonValue& schema, const JsonValue& instance);

}  // namespace etrt::loader

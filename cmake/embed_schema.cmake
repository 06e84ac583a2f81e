# Turns manifests/schema.json into a C++ source holding it as a string.
file(READ ${INPUT} _schema)
file(WRITE ${OUTPUT}.tmp
"// Generated from manifests/schema.json; do not edit.\n"
"namespace etrt::loader {\n"
"extern const char kManifestSchemaText[];\n"
"const char kManifestSchemaText[] = R\"etrt_schema(${_schema})etrt_schema\";\n"
"}  // namespace etrt::loader\n")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)

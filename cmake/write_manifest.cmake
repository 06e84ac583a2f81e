# Fills a manifest template: @LIBRARY@ (path relative to the manifest),
# @SHA256@ (of the built library), @ABI_MAJOR@, @ABI_MINOR@, @VERSION@.
file(SHA256 ${LIBRARY} SHA256)
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)

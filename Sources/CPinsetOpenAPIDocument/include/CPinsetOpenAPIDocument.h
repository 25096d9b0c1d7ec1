// The admin API's OpenAPI 3 document, openapi.json beside this target's source, served at /api/v1/openapi.json.
#ifndef C_PINSET_OPENAPI_DOCUMENT_H
#define C_PINSET_OPENAPI_DOCUMENT_H

#include <stddef.h>

/// The document's bytes, which live as long as the program; their count is stored in `*length`.
const unsigned char *pinset_openapi_document(size_t *length);

#endif

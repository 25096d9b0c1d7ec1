// Embedded by the C compiler rather than by SwiftPM's `embedInCode`, whose Swift array literal of 114,000 integers
// takes 8 s of CPU to compile in a debug build; see CPinsetPublicSuffixList.
#include "CPinsetOpenAPIDocument.h"

#if !defined(__has_embed)
#error "Embedding the OpenAPI document needs C23 #embed: Clang 19 or later (Swift 6.2 toolchains; Xcode 26 on a Mac)."
#endif

static const unsigned char document[] = {
#embed "openapi.json"
};

const unsigned char *pinset_openapi_document(size_t *length) {
    *length = sizeof document;
    return document;
}

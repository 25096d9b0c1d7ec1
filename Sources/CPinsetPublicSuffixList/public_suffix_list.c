// The list is embedded by the C compiler rather than by SwiftPM's `embedInCode`, which writes it as a Swift array
// literal of 246,000 integers: 18 s of CPU to compile in a debug build and 41 s in a release build, on the path of
// every module that depends on PinsetCore. #embed takes milliseconds, and the compiler's dependency output names the
// file, so a new list rebuilds this target.
#include "CPinsetPublicSuffixList.h"

#if !defined(__has_embed)
#error "Embedding the Public Suffix List needs C23 #embed: Clang 19 or later (Swift 6.2 toolchains; Xcode 26 on a Mac)."
#endif

static const unsigned char list[] = {
#embed "public_suffix_list.dat"
};

const unsigned char *pinset_public_suffix_list(size_t *length) {
    *length = sizeof list;
    return list;
}

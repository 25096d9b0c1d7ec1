// The Public Suffix List embedded in pinset and the client library: public_suffix_list.dat beside this target's
// source, byte for byte as published (scripts/update-public-suffix-list replaces it).
#ifndef C_PINSET_PUBLIC_SUFFIX_LIST_H
#define C_PINSET_PUBLIC_SUFFIX_LIST_H

#include <stddef.h>

/// The list's bytes, which live as long as the program; their count is stored in `*length`.
const unsigned char *pinset_public_suffix_list(size_t *length);

#endif

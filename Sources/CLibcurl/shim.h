// Headers only: libcurl is not linked but loaded at the first request (CBrokerShims,
// curl_library.c), so no `link` here and no pkg-config flags in Package.swift.
#if !__has_include(<curl/curl.h>)
#error "curl/curl.h not found: install libcurl4-openssl-dev (Debian: make deps, or apt-get install libcurl4-openssl-dev)"
#endif
#include <curl/curl.h>

// libcurl is loaded at the first request, never at start. Its dependency tree (OpenSSL,
// GnuTLS, krb5, libssh2, nghttp2, p11-kit, ...) costs every core process about 6 MiB of RSS and
// its constructors; the agent's warm answers, `accounts` and a `token get` of a valid token never
// make a request. The shims below call through `process_api`, filled once by `cbroker_curl_start`.
#include "CBrokerShims.h"
#include "code_pages.h"
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_error(char *error, size_t size, const char *text) {
  if (error != NULL && size > 0) snprintf(error, size, "%s", text != NULL ? text : "unknown dlopen error");
}

int cbroker_curl_resolve(const char *name, cbroker_curl_api *api, char *error, size_t size) {
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    copy_error(error, size, dlerror());
    return -1;
  }
  struct { const char *symbol; void **slot; } table[] = {
    { "curl_global_init", (void **)&api->global_init },
    { "curl_version_info", (void **)&api->version_info },
    { "curl_easy_init", (void **)&api->easy_init },
    { "curl_easy_cleanup", (void **)&api->easy_cleanup },
    { "curl_easy_perform", (void **)&api->easy_perform },
    { "curl_easy_setopt", (void **)&api->easy_setopt },
    { "curl_easy_getinfo", (void **)&api->easy_getinfo },
    { "curl_easy_strerror", (void **)&api->easy_strerror },
    { "curl_slist_append", (void **)&api->slist_append },
    { "curl_slist_free_all", (void **)&api->slist_free_all },
  };
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    dlerror();
    *table[i].slot = dlsym(library, table[i].symbol);
    if (*table[i].slot == NULL) {
      // dlerror names only the file it found; say which name led there, and what it lacks.
      struct link_map *map = NULL;
      const char *path = dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != NULL ? map->l_name : "?";
      if (error != NULL && size > 0) snprintf(error, size, "%s at %s has no function %s", name, path, table[i].symbol);
      memset(api, 0, sizeof(*api));
      dlclose(library);
      return -1;
    }
  }
  return 0;
}

static cbroker_curl_api process_api;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int started;

// SSLKEYLOGFILE is dropped first: OpenSSL would write every TLS session key to that file, and with
// them anyone could read the tokens in a captured exchange.
static int start(char *error, size_t size) {
  unsetenv("SSLKEYLOGFILE");
  if (cbroker_curl_resolve(CBROKER_LIBCURL, &process_api, error, size) != 0) return -1;
  CURLcode code = process_api.global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    if (error != NULL && size > 0)
      snprintf(error, size, "%s: curl_global_init failed: %s", CBROKER_LIBCURL, process_api.easy_strerror(code));
    return -1;
  }
  return 0;
}

int cbroker_curl_start(char *error, size_t size) {
  if (atomic_load_explicit(&started, memory_order_acquire)) return 0;
  pthread_mutex_lock(&start_lock);
  int result = 0;
  if (!atomic_load_explicit(&started, memory_order_relaxed)) {
    result = start(error, size);
    if (result == 0) atomic_store_explicit(&started, 1, memory_order_release);
  }
  pthread_mutex_unlock(&start_lock);
  return result;
}

curl_version_info_data *cbroker_curl_version_info(void) {
  if (!atomic_load_explicit(&started, memory_order_acquire)) return NULL;
  return process_api.version_info(CURLVERSION_NOW);
}
CURL *cbroker_easy_init(void) { return process_api.easy_init(); }
void cbroker_easy_cleanup(CURL *handle) { process_api.easy_cleanup(handle); }
CURLcode cbroker_easy_perform(CURL *handle) {
  CURLcode code = process_api.easy_perform(handle);
  cbroker_code_pages_used();
  return code;
}
const char *cbroker_easy_strerror(CURLcode code) { return process_api.easy_strerror(code); }
struct curl_slist *cbroker_slist_append(struct curl_slist *list, const char *line) {
  return process_api.slist_append(list, line);
}
void cbroker_slist_free_all(struct curl_slist *list) { process_api.slist_free_all(list); }

CURLcode cbroker_easy_setopt_long(CURL *handle, CURLoption option, long value) {
  return process_api.easy_setopt(handle, option, value);
}
CURLcode cbroker_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
  return process_api.easy_setopt(handle, option, value);
}
CURLcode cbroker_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
  return process_api.easy_setopt(handle, option, value);
}
CURLcode cbroker_easy_setopt_write_function(CURL *handle, CURLoption option,
                                            size_t (*fn)(char *, size_t, size_t, void *)) {
  return process_api.easy_setopt(handle, option, fn);
}
CURLcode cbroker_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
  return process_api.easy_getinfo(handle, info, value);
}
CURLcode cbroker_easy_setopt_xferinfo_function(CURL *handle, CURLoption option,
                                               curl_xferinfo_callback fn) {
  return process_api.easy_setopt(handle, option, fn);
}

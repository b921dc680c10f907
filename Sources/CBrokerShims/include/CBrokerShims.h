// What Swift cannot call directly: libcurl (loaded at first use; variadic setters), the static
// SecretSchema, SO_PEERCRED and prctl (GNU-only), and the kernel's sock_diag(7) structures
// (linux/inet_diag.h, which Glibc does not export). Symbols are cbroker_*; no logic lives here but
// the loading of libcurl (curl_library.c).
#ifndef CBROKER_SHIMS_H
#define CBROKER_SHIMS_H

#include <libsecret/secret.h>
#include <curl/curl.h>
#include <sys/types.h>
#include <spawn.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

/// The schema every tokenbroker item is stored under: "org.tokenbroker.Secret",
/// SECRET_SCHEMA_NONE, string attributes application, account, kind, scopes.
const SecretSchema *cbroker_token_schema(void);

/// libcurl is not linked: it is loaded at the first request (curl_library.c), so processes that
/// make none (the agent's warm answers, `status`) never map its dependency tree.
#define CBROKER_LIBCURL "libcurl.so.4"

/// The libcurl functions tokenbroker calls, as resolved by `cbroker_curl_resolve`.
typedef struct cbroker_curl_api {
  CURLcode (*global_init)(long flags);
  curl_version_info_data *(*version_info)(CURLversion age);
  CURL *(*easy_init)(void);
  void (*easy_cleanup)(CURL *handle);
  CURLcode (*easy_perform)(CURL *handle);
  CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
  CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
  const char *(*easy_strerror)(CURLcode code);
  struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
  void (*slist_free_all)(struct curl_slist *list);
} cbroker_curl_api;

/// dlopen(`name`, RTLD_NOW | RTLD_LOCAL), then dlsym of every function of `cbroker_curl_api` into
/// `*api`. 0 on success; -1 when the library or a symbol is missing, with dlerror's text (it names
/// the file and the symbol) in `error` (`size` bytes, always NUL-terminated) and `*api` zeroed.
int cbroker_curl_resolve(const char *name, cbroker_curl_api *api, char *error, size_t size);
/// Once per process, before any other libcurl call, from any thread (a mutex, then an atomic flag):
/// unsets SSLKEYLOGFILE, resolves CBROKER_LIBCURL into the table the shims below call through, and
/// runs curl_global_init(CURL_GLOBAL_DEFAULT). 0 when libcurl is ready (at once after the first
/// success); else -1 with why in `error` as for `cbroker_curl_resolve`, and the next call tries
/// again (an agent outlives the `apt-get install` the message asks for). Every shim below but
/// `cbroker_curl_version_info` may be called only after this returned 0.
int cbroker_curl_start(char *error, size_t size);

/// curl_version_info(CURLVERSION_NOW), or NULL before `cbroker_curl_start` succeeded.
curl_version_info_data *cbroker_curl_version_info(void);
/// libcurl's functions through the loaded table (names without the `curl_` of the originals).
CURL *cbroker_easy_init(void);
void cbroker_easy_cleanup(CURL *handle);
CURLcode cbroker_easy_perform(CURL *handle);
const char *cbroker_easy_strerror(CURLcode code);
struct curl_slist *cbroker_slist_append(struct curl_slist *list, const char *line);
void cbroker_slist_free_all(struct curl_slist *list);
/// Non-variadic wrappers of curl_easy_setopt / curl_easy_getinfo, one per value type.
CURLcode cbroker_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode cbroker_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode cbroker_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode cbroker_easy_setopt_write_function(CURL *handle, CURLoption option,
                                            size_t (*fn)(char *, size_t, size_t, void *));
CURLcode cbroker_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
/// CURLOPT_XFERINFOFUNCTION takes a callback of another type than the write/header callbacks;
/// BrokerHTTP uses it to abort a transfer when the Swift task is cancelled.
CURLcode cbroker_easy_setopt_xferinfo_function(CURL *handle, CURLoption option,
                                               curl_xferinfo_callback fn);

/// Drops the whole process's code pages (the program's and every loaded library's: libcurl,
/// OpenSSL, ...) from its resident set (madvise MADV_DONTNEED on their read-only file-backed
/// segments: code, constants; they stay in the page cache and come back as minor faults where
/// they run next), if a libcurl transfer ran since the last call (code_pages.c). Any thread, any
/// time, libcurl loaded or not.
/// Returns the bytes of mappings advised, 0 when there was nothing to do (one atomic exchange).
long cbroker_code_pages_release(void);
/// SO_PEERCRED of a connected AF_UNIX socket. 0 on success, -1 and errno on failure.
int cbroker_peer_credentials(int fd, uid_t *uid, pid_t *pid);
/// prctl(PR_SET_DUMPABLE, 0): no core dumps, no ptrace by same-uid processes. 0 or -1.
int cbroker_disable_dumping(void);
/// mallopt(M_ARENA_MAX, 1): threads started from now on share the existing malloc arenas; none
/// reserves an arena of its own (64 MiB of address space each). 1 on success, 0 on failure.
int cbroker_single_malloc_arena(void);
/// The width in columns of the terminal on `fd` (ioctl TIOCGWINSZ, variadic in C), or -1.
int cbroker_terminal_columns(int fd);

/// GNU-only calls: pipe2(O_CLOEXEC | O_NONBLOCK); accept4(SOCK_CLOEXEC | SOCK_NONBLOCK); the
/// POSIX_SPAWN_SETSID flag (what BrokerWire's Spawn.setsidFlag spells; its test compares them).
/// Each returns what the call returns.
int cbroker_pipe_cloexec_nonblock(int fds[2]);
int cbroker_accept_cloexec_nonblock(int fd);
int cbroker_posix_spawn_setsid_flag(void);

/// `tokenbroker exec`: handlers (SA_SIGINFO | SA_RESTART) for `signals` that write one byte per
/// signal to `write_fd`: the number, plus 0x80 when si_code is SI_KERNEL (a terminal's ^C); a
/// negative `write_fd` restores the default actions. 0 or -1.
int cbroker_relay_signals(int write_fd, const int *signals, int count);

#endif

// What Swift cannot call directly: variadic libcurl setters, the static SecretSchema,
// SO_PEERCRED and prctl (GNU-only). Symbols are cbroker_*; no logic lives here.
#ifndef CBROKER_SHIMS_H
#define CBROKER_SHIMS_H

#include <libsecret/secret.h>
#include <curl/curl.h>
#include <sys/types.h>
#include <spawn.h>

/// The schema every tokenbroker item is stored under: "org.tokenbroker.Secret",
/// SECRET_SCHEMA_NONE, string attributes application, account, kind, scopes.
const SecretSchema *cbroker_token_schema(void);

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

/// SO_PEERCRED of a connected AF_UNIX socket. 0 on success, -1 and errno on failure.
int cbroker_peer_credentials(int fd, uid_t *uid, pid_t *pid);
/// prctl(PR_SET_DUMPABLE, 0): no core dumps, no ptrace by same-uid processes. 0 or -1.
int cbroker_disable_dumping(void);
/// The width in columns of the terminal on `fd` (ioctl TIOCGWINSZ, variadic in C), or -1.
int cbroker_terminal_columns(int fd);

/// GNU-only calls of the loopback sign-in (BrokerSystem): pipe2(O_CLOEXEC | O_NONBLOCK);
/// accept4(SOCK_CLOEXEC | SOCK_NONBLOCK); the POSIX_SPAWN_SETSID flag; and
/// posix_spawn_file_actions_addclosefrom_np(actions, from). Each returns what the call returns.
int cbroker_pipe_cloexec_nonblock(int fds[2]);
int cbroker_accept_cloexec_nonblock(int fd);
int cbroker_posix_spawn_setsid_flag(void);
int cbroker_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/// `tokenbroker exec`: handlers (SA_SIGINFO | SA_RESTART) for `signals` that write one byte per
/// signal to `write_fd`: the number, plus 0x80 when si_code is SI_KERNEL (a terminal's ^C); a
/// negative `write_fd` restores the default actions. 0 or -1.
int cbroker_relay_signals(int write_fd, const int *signals, int count);
/// Makes posix_spawn reset `signals` to their default action and clear the signal mask in the
/// child (POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK, plus `extra_flags`). 0 or an error.
int cbroker_spawn_default_signals(posix_spawnattr_t *attributes, const int *signals, int count, short extra_flags);

#endif

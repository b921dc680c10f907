#include "CBrokerShims.h"
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

static const SecretSchema token_schema = {
  "org.tokenbroker.Secret", SECRET_SCHEMA_NONE,
  {
    { "application", SECRET_SCHEMA_ATTRIBUTE_STRING },
    { "account", SECRET_SCHEMA_ATTRIBUTE_STRING },
    { "kind", SECRET_SCHEMA_ATTRIBUTE_STRING },
    { "scopes", SECRET_SCHEMA_ATTRIBUTE_STRING },
    { NULL, 0 },
  }
};

const SecretSchema *cbroker_token_schema(void) { return &token_schema; }

CURLcode cbroker_easy_setopt_long(CURL *handle, CURLoption option, long value) {
  return curl_easy_setopt(handle, option, value);
}
CURLcode cbroker_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
  return curl_easy_setopt(handle, option, value);
}
CURLcode cbroker_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
  return curl_easy_setopt(handle, option, value);
}
CURLcode cbroker_easy_setopt_write_function(CURL *handle, CURLoption option,
                                            size_t (*fn)(char *, size_t, size_t, void *)) {
  return curl_easy_setopt(handle, option, fn);
}
CURLcode cbroker_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
  return curl_easy_getinfo(handle, info, value);
}
CURLcode cbroker_easy_setopt_xferinfo_function(CURL *handle, CURLoption option,
                                               curl_xferinfo_callback fn) {
  return curl_easy_setopt(handle, option, fn);
}

int cbroker_peer_credentials(int fd, uid_t *uid, pid_t *pid) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  if (uid) *uid = cred.uid;
  if (pid) *pid = cred.pid;
  return 0;
}

int cbroker_disable_dumping(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int cbroker_terminal_columns(int fd) {
  struct winsize ws;
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return -1;
  return ws.ws_col;
}

int cbroker_pipe_cloexec_nonblock(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }
int cbroker_accept_cloexec_nonblock(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }
int cbroker_posix_spawn_setsid_flag(void) { return POSIX_SPAWN_SETSID; }
int cbroker_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
  return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#include "CBrokerShims.h"
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <string.h>
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

int cbroker_peer_credentials(int fd, uid_t *uid, pid_t *pid) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  if (uid) *uid = cred.uid;
  if (pid) *pid = cred.pid;
  return 0;
}

int cbroker_disable_dumping(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int cbroker_single_malloc_arena(void) { return mallopt(M_ARENA_MAX, 1); }

int cbroker_terminal_columns(int fd) {
  struct winsize ws;
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return -1;
  return ws.ws_col;
}

int cbroker_pipe_cloexec_nonblock(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }
int cbroker_accept_cloexec_nonblock(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }
int cbroker_posix_spawn_setsid_flag(void) { return POSIX_SPAWN_SETSID; }

// Signal relay of `tokenbroker exec`: the handler only writes one byte (the signal number, with
// 0x80 added when the kernel sent it, e.g. a terminal's ^C) to a non-blocking pipe.
static volatile int cbroker_relay_fd = -1;
static void cbroker_relay_handler(int sig, siginfo_t *info, void *context) {
  (void)context;
  int saved = errno;
  unsigned char byte = (unsigned char)(sig & 0x7f);
  if (info != NULL && info->si_code == SI_KERNEL) byte |= 0x80;
  if (cbroker_relay_fd >= 0) (void)!write(cbroker_relay_fd, &byte, 1);
  errno = saved;
}
int cbroker_relay_signals(int write_fd, const int *signals, int count) {
  cbroker_relay_fd = write_fd;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  if (write_fd >= 0) {
    action.sa_sigaction = cbroker_relay_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
  } else {
    action.sa_handler = SIG_DFL;
  }
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < count; i++) {
    if (sigaction(signals[i], &action, NULL) != 0) return -1;
  }
  return 0;
}

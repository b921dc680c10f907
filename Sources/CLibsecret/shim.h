// The D-Bus path calls (libsecret/secret-paths.h) are what `secret-tool lookup` uses: a search
// and a read with no item proxy made. libsecret marks them unstable, hence the define.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>

"""A wall clock the test can step: an LD_PRELOAD library, built here with cc, that adds the
offset (seconds) written in a file to CLOCK_REALTIME[_COARSE], gettimeofday and time on each call
and leaves the monotonic clocks alone. Loaded into tokenbroker-core only (the front is a static
executable and ignores LD_PRELOAD)."""
import os
import subprocess

SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static long offset(void) {
  const char *path = getenv("CLOCK_SHIM_OFFSET_FILE");
  long value = 0;
  FILE *f = path ? fopen(path, "r") : NULL;
  if (f) {
    if (fscanf(f, "%ld", &value) != 1) value = 0;
    fclose(f);
  }
  return value;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
  static int (*real)(clockid_t, struct timespec *);
  if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  int r = real(clock, ts);
  if (r == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) ts->tv_sec += offset();
  return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
  static int (*real)(struct timeval *, void *);
  if (!real) real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
  int r = real(tv, tz);
  if (r == 0 && tv) tv->tv_sec += offset();
  return r;
}

time_t time(time_t *t) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (t) *t = ts.tv_sec;
  return ts.tv_sec;
}
"""


class ClockShim:
    """`env()` loads the shim; `step(seconds)` sets the offset for every later clock reading."""

    def __init__(self, directory):
        self.library = os.path.join(directory, "clock_shim.so")
        self.offset_file = os.path.join(directory, "clock_offset")
        source = os.path.join(directory, "clock_shim.c")
        with open(source, "w") as f:
            f.write(SOURCE)
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", self.library, source, "-ldl"], check=True)
        self.step(0)

    def step(self, seconds):
        with open(self.offset_file + ".new", "w") as f:
            f.write("%d\n" % seconds)
        os.replace(self.offset_file + ".new", self.offset_file)

    def env(self):
        return {"LD_PRELOAD": self.library, "CLOCK_SHIM_OFFSET_FILE": self.offset_file}

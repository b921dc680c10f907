// argc and argv for the front (the static `tokenbroker` executable), straight from glibc.
//
// glibc calls each function in `.init_array` with (argc, argv, envp), in static executables
// (csu/libc-start.c, call_init) as in dynamic ones (elf/dl-init.c); System V gABI leaves the
// arguments out, glibc has passed them since 2.1. The Swift runtime asks for argv through
// `_swift_stdlib_getUnsafeArgvArgc` (stdlib/public/CommandLineSupport/CommandLine.cpp), whose own
// Linux definition reads /proc/self/cmdline or /proc/self/maps at every start. Defining the symbol
// here keeps that archive member out of the link; should it ever be pulled in, the link fails with
// a duplicate symbol rather than running with two.

static int front_argc;
static char **front_argv;

static void front_capture_arguments(int argc, char **argv, char **envp) {
  (void)envp;
  front_argc = argc;
  front_argv = argv;
}

__attribute__((section(".init_array"), used))
static void (*const front_capture_entry)(int, char **, char **) = front_capture_arguments;

/// argv as the kernel gave it (NULL-terminated, owned by the process), and argc in *count.
char **_swift_stdlib_getUnsafeArgvArgc(int *count) {
  *count = front_argc;
  return front_argv;
}

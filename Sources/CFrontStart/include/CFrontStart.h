#ifndef CFRONTSTART_H
#define CFRONTSTART_H

// The front's process start: nothing to call from Swift. argv.c captures argc and argv as glibc
// hands them to every `.init_array` function, and answers the Swift runtime's
// `_swift_stdlib_getUnsafeArgvArgc` from them, so `CommandLine` costs no system call.

#endif

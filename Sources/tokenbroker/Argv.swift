import Glibc

/// The Swift runtime's hook behind `CommandLine.arguments`, defined in the front so that the
/// runtime's own definition (CommandLine.cpp in libswiftCore.a) is not linked: its constructor
/// finds argv at every start by reading `/proc/self/maps` through `sscanf`, a fifth of a warm
/// call's instructions and three system calls. A definition here keeps that archive member out
/// (it defines nothing else anyone uses); should it ever be pulled in, the link fails loudly
/// (a duplicate symbol), it never runs with two.
///
/// The kernel starts a process with argc, argv[0..<argc], NULL, then the environment on the
/// stack, and glibc points `environ` at that environment; the front never changes its
/// environment before `CommandLine` is first read (Front.run() reads it first), so walking back
/// from `environ` past the argument pointers reaches argc: the first word equal to the number of
/// pointers passed.
/// - Parameter count: set to argc.
/// - Returns: argv (NULL-terminated, owned by the process).
@_silgen_name("_swift_stdlib_getUnsafeArgvArgc")
public func frontArgv(_ count: UnsafeMutablePointer<Int32>) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
  let words = UnsafeMutableRawPointer(environ).assumingMemoryBound(to: Int.self)
  var argc = 0
  while words[-(argc + 2)] != argc { argc += 1 }
  count.pointee = Int32(argc)
  return environ - (argc + 1)
}

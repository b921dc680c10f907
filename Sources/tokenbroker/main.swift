// The small front: it links nothing but the Swift runtime and glibc, so git, curl and build tools
// that call it hundreds of times pay ~2 ms per call. Until the agent exists it hands every command
// to the full program, `tokenbroker-core`, keeping argv (argv[0] included: the program acts on the
// name it was started under, e.g. git-credential-tokenbroker).
import Glibc

let core = CorePath.locate()
var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) }
argv.append(nil)
execv(core, &argv)
let reason = String(cString: strerror(errno))
FileDescriptor.standardError.write(
  "tokenbroker: cannot run \(core) (\(reason)); reinstall tokenbroker (make install)\n")
exit(1)

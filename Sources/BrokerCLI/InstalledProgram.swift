import Glibc

/// Where this install's programs are, by absolute path, for configurations that other programs
/// run: git's `credential.helper` value (`GitHelperProgram`) and the password commands `mail
/// setup` prints (`MailClientConfig`). A program by absolute path is run as it is, where a bare
/// name is looked up on the `PATH` of whatever runs it (a mail client started by a desktop session
/// or systemd may have another).
///
/// A program is looked for, in order: beside this install's front (`PREFIX/bin/`, for a core in
/// `PREFIX/libexec/tokenbroker/`, as `make install` and the package lay them out), beside this
/// program (a build tree with the links made), then on `PATH` (the links README's by-hand steps
/// make). The path is given as found, never with links resolved: the front serves git under the
/// name `git-credential-tokenbroker` only. A path holding a character a shell would read (git and
/// the mail clients run the value through `sh -c`) is not given.
enum InstalledProgram {
  /// The absolute path of this install's program `program` (`tokenbroker`,
  /// `git-credential-tokenbroker`), looked for as above; nil when none is found or its path would
  /// need quoting.
  /// - Parameters:
  ///   - executable: this program's file (`ProcessContext.executable`), or nil when unknown.
  ///   - path: the `PATH` variable.
  static func path(of program: String, executable: String?, path: String?) -> String? {
    var candidates: [String] = []
    if let executable, let dir = directory(of: executable) {
      let libexec = "/libexec/tokenbroker"
      if dir.hasSuffix(libexec) { candidates.append(String(dir.dropLast(libexec.count)) + "/bin/" + program) }
      candidates.append(dir + "/" + program)
    }
    for dir in (path ?? "").split(separator: ":") where dir.hasPrefix("/") {
      candidates.append(String(dir) + "/" + program)
    }
    guard let found = candidates.first(where: runs), isPlain(found) else { return nil }
    return found
  }

  /// Whether `value` is an absolute path, which git and shells run as it is.
  static func isAbsolutePath(_ value: String) -> Bool { value.hasPrefix("/") }

  /// Whether the file at `path` is there and executable by this user.
  static func runs(_ path: String) -> Bool { access(path, X_OK) == 0 }

  /// No character that `sh -c` would treat as more than a letter of the path.
  static func isPlain(_ path: String) -> Bool {
    path.utf8.allSatisfy { c in
      (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || "/._-+,:@".utf8.contains(c)
    }
  }

  private static func directory(of file: String) -> String? {
    guard file.hasPrefix("/"), let slash = file.lastIndex(of: "/") else { return nil }
    return String(file[..<slash])
  }
}

import Glibc

/// COMMAND's argv and environment for `tokenbroker exec`, as bytes: as env(1) does, what
/// tokenbroker was given reaches COMMAND unchanged, bytes that are not UTF-8 included (a file name,
/// a Latin-1 value); only the variables exec removes or sets differ.
enum ExecChild {
  /// This process's argv, the kernel's bytes (read only by `exec`, not at every start).
  static var processArguments: [[UInt8]] {
    (0..<Int(CommandLine.argc)).compactMap { i in CommandLine.unsafeArgv[i].map(bytes) }
  }

  /// This process's `environ` entries, the kernel's bytes.
  static var processEnvironment: [[UInt8]] {
    var entries: [[UInt8]] = []
    var p = environ
    while let entry = p.pointee {
      entries.append(bytes(entry))
      p += 1
    }
    return entries
  }

  private static func bytes(_ c: UnsafeMutablePointer<CChar>) -> [UInt8] {
    Array(UnsafeRawBufferPointer(start: c, count: strlen(c)))
  }

  /// COMMAND's arguments: the kernel's bytes of argv's last `command.count` entries when they are
  /// the ones parsed (COMMAND is always argv's tail), else `command`'s UTF-8.
  static func arguments(_ command: [String], raw: [[UInt8]]?) -> [[UInt8]] {
    if let raw, raw.count >= command.count {
      let tail = Array(raw.suffix(command.count))
      if zip(tail, command).allSatisfy({ String(decoding: $0, as: UTF8.self) == $1 }) { return tail }
    }
    return command.map { Array($0.utf8) }
  }

  /// COMMAND's environment (`NAME=value` entries): this process's, byte for byte and in order
  /// (`raw`; else `environment`'s), less every variable named in `removed` or `added`, then
  /// `added`.
  static func environment(
    raw: [[UInt8]]?, environment: [String: String], removed: [String], added: [(String, String)]
  ) -> [[UInt8]] {
    let base = raw ?? environment.map { Array("\($0.key)=\($0.value)".utf8) }
    let dropped = Set((removed + added.map(\.0)).map { Array($0.utf8) })
    let kept = base.filter { entry in
      let name = entry.firstIndex(of: UInt8(ascii: "=")).map { Array(entry[..<$0]) } ?? entry
      return !dropped.contains(name)
    }
    return kept + added.map { Array("\($0.0)=\($0.1)".utf8) }
  }
}

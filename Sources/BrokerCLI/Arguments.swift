import BrokerCore
import BrokerWire

/// A usage error: printed as `error: <what>` then the command's usage line; exit 64.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
  public var message: String
  public var usage: String
  public init(_ message: String, usage: String) {
    self.message = message
    self.usage = usage
  }
  public var description: String { message }
}

/// A small argument scanner in swift-argument-parser's conventions: `--name value`, `--name=value`,
/// flags, repeated options, positionals, and `--` ending options.
struct Arguments {
  private(set) var positionals: [String] = []
  private var options: [(String, String?)] = []
  let usage: String

  /// - Parameters:
  ///   - valued: option names (without `--`) that take a value.
  ///   - flags: option names that take none.
  /// - Throws: `UsageError` for an unknown option or a missing value.
  init(_ args: [String], valued: Set<String>, flags: Set<String>, usage: String) throws {
    self.usage = usage
    var i = 0
    var onlyPositionals = false
    while i < args.count {
      let a = args[i]
      i += 1
      if onlyPositionals || !a.hasPrefix("-") || a == "-" {
        positionals.append(a)
        continue
      }
      if a == "--" {
        onlyPositionals = true
        continue
      }
      guard a.hasPrefix("--") else { throw UsageError("unknown option '\(a)'", usage: usage) }
      var name = String(a.dropFirst(2))
      var value: String?
      if let eq = name.firstIndex(of: "=") {
        value = String(name[name.index(after: eq)...])
        name = String(name[..<eq])
      }
      if valued.contains(name) {
        if value == nil {
          guard i < args.count else { throw UsageError("missing value for '--\(name)'", usage: usage) }
          value = args[i]
          i += 1
        }
        options.append((name, value))
      } else if flags.contains(name) {
        if value != nil { throw UsageError("'--\(name)' takes no value", usage: usage) }
        options.append((name, nil))
      } else {
        let near = NameSuggestion.closest(to: name, among: (valued.union(flags)).sorted()).map { " (did you mean '--\($0)'?)" }
        throw UsageError("unknown option '--\(name)'\(near ?? "")", usage: usage)
      }
    }
  }

  /// Scans `args` with the options that `CommandTable` declares for `command` (and `subcommand`),
  /// its usage line in errors.
  /// - Throws: `UsageError` for an unknown option or a missing value.
  init(_ args: [String], command: String, subcommand: String? = nil) throws {
    guard let declaration = CommandTable.command(command), let form = declaration.form(subcommand) else {
      preconditionFailure("no declaration of '\(command) \(subcommand ?? "")' in CommandTable")
    }
    try self.init(args, valued: Set(form.valued), flags: Set(form.flags), usage: declaration.usage)
  }

  func flag(_ name: String) -> Bool { options.contains { $0.0 == name } }
  func value(_ name: String) -> String? { options.last { $0.0 == name }?.1 }
  func values(_ name: String) -> [String] { options.filter { $0.0 == name }.compactMap(\.1) }

  /// An integer option. - Throws: `UsageError` when it is not a whole number ≥ 0.
  func seconds(_ name: String) throws -> Int? {
    guard let v = value(name) else { return nil }
    guard let n = Int(v), n >= 0 else { throw UsageError("'--\(name)' needs a whole number of seconds, not '\(v)'", usage: usage) }
    return n
  }

  /// Exactly `count` positionals. - Throws: `UsageError`.
  func expectPositionals(_ names: [String]) throws -> [String] {
    if positionals.count < names.count {
      throw UsageError("missing \(names[positionals.count])", usage: usage)
    }
    if positionals.count > names.count {
      throw UsageError("unexpected argument '\(positionals[names.count])'", usage: usage)
    }
    return positionals
  }
}

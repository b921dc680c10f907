import BrokerCore

/// The parsed arguments of `account add`: `NAME`, `--provider P` (optional with `--replace`),
/// any `--KEY VALUE` or `--KEY=VALUE` (each key once), `--replace`.
struct AddRequest {
  var name: String
  /// nil only with `--replace`: the account keeps its provider.
  var provider: String?
  var entries: [(String, String)] = []
  var replace = false

  /// - Throws: `UsageError` for a missing or malformed name, a missing `--provider` (without
  ///   `--replace`), a key given
  ///   twice or without a value, or a value with a control character.
  init(_ args: [String]) throws {
    let usage = Help.usage("account")
    var names: [String] = []
    var provider: String?
    var i = 0
    var seen = Set<String>()
    var lastList: (key: String, value: String)?  // the list option whose value was the argument just read
    var listValueBefore: [String: String] = [:]  // a stray word -> the quoted option it belongs to
    while i < args.count {
      let a = args[i]
      i += 1
      if a == "--replace" {
        replace = true
        lastList = nil
        continue
      }
      guard a.hasPrefix("--"), a.count > 2 else {
        if a.hasPrefix("-") && a != "-" { throw UsageError("unknown option '\(a)'", usage: usage) }
        if let (key, value) = lastList, !names.isEmpty { listValueBefore[a] = "--\(key) '\(value) \(a)'" }
        lastList = nil
        names.append(a)
        continue
      }
      var key = String(a.dropFirst(2))
      var value: String
      if let eq = key.firstIndex(of: "=") {
        value = String(key[key.index(after: eq)...])
        key = String(key[..<eq])
      } else {
        guard i < args.count else { throw UsageError("missing value for '--\(key)'", usage: usage) }
        value = args[i]
        i += 1
      }
      lastList = ["scopes", "hosts"].contains(key) ? (key, value) : nil
      guard seen.insert(key).inserted else { throw UsageError("'--\(key)' given twice", usage: usage) }
      guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
        throw UsageError("the value of '--\(key)' holds a control character", usage: usage)
      }
      value = value.trimmingSpaces()
      if key == "provider" { provider = value } else { entries.append((key, value)) }
    }
    guard let name = names.first else { throw UsageError("missing NAME", usage: usage) }
    guard names.count == 1 else {
      // `--scopes a b`: the list's second word is taken for a second NAME.
      let hint = listValueBefore[names[1]].map { "; to give several values, quote them: \($0)" } ?? ""
      throw UsageError("unexpected argument '\(names[1])'\(hint)", usage: usage)
    }
    guard AddRequest.isValidName(name) else {
      throw UsageError("'\(name)' cannot be an account name: use letters, digits and . _ @ + -", usage: usage)
    }
    guard provider != nil || replace else { throw Self.missingProvider }
    self.name = name
    self.provider = provider
  }

  static var missingProvider: UsageError { UsageError("missing --provider (azure, google, sharepoint, oidc or github)", usage: Help.usage("account")) }

  /// The account group's entries (`provider` first when given) and the `[host HOST/PATH]` groups to bind to
  /// the account: a `--hosts` entry with a path (`dev.azure.com/contoso`) cannot be an account's
  /// `hosts` entry (interface.md §2.1: those are hosts and patterns), so it becomes a group of
  /// its own with `account = NAME`; the other entries stay in `hosts` (none left: no `hosts` key).
  func splitPathHosts() -> (entries: [(String, String)], pathGroups: [String]) {
    var entries = provider.map { [("provider", $0)] } ?? []
    var groups: [String] = []
    for (key, value) in self.entries {
      guard key == "hosts" else {
        entries.append((key, value))
        continue
      }
      let items = ScopeSet.split(value)
      groups += items.filter { $0.contains("/") }.map { "host " + $0 }
      let plain = items.filter { !$0.contains("/") }
      if !plain.isEmpty { entries.append((key, plain.joined(separator: " "))) }
    }
    return (entries, groups)
  }

  /// Letters, digits and `. _ @ + -`, not starting with `-`: a name that fits a group header and
  /// the one-word `via` and `[host] account` values.
  static func isValidName(_ s: String) -> Bool {
    !s.isEmpty && !s.hasPrefix("-") && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._@+-".contains($0)) }
  }
}

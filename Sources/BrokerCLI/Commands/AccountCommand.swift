import BrokerCore
import BrokerStore

/// `tokenbroker account add NAME --provider P [--KEY VALUE]... [--replace]` and
/// `tokenbroker account remove NAME`: edit the user's config file (or the `--config` /
/// `TOKENBROKER_CONFIG` file) through GKeyFile, keeping its comments (interface.md §2.1, §3).
///
/// The edit is checked first: the config as it would read afterwards (`/etc/tokenbroker/config`
/// merged with the edited file) must parse, and every key given to `add` must be a known account
/// key; otherwise the command exits 64 naming the key and the file is left untouched. `remove` of
/// an account the file does not define exits 64. Tokens in the keyring are not touched: `logout`
/// deletes them.
enum AccountCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    switch args.first {
    case "add": return try add(Array(args.dropFirst()), runtime: runtime)
    case "remove": return try remove(Array(args.dropFirst()), runtime: runtime)
    case let other?: throw UsageError("unknown subcommand 'account \(other)' (add, remove)", usage: Help.usage("account"))
    case nil: throw UsageError("missing subcommand (add, remove)", usage: Help.usage("account"))
    }
  }

  // MARK: add

  private static func add(_ args: [String], runtime: Runtime) throws -> ExitStatus {
    let request = try AddRequest(args)
    for (key, _) in request.entries where !ConfigKeys.account.contains(key) {
      let hint = NameSuggestion.closest(to: key, among: ConfigKeys.account).map { "did you mean '--\($0)'? " } ?? ""
      throw HelperError(
        status: .usage,
        description: "'--\(key)' is not an account key; \(hint)see 'man tokenbroker-config' for the keys (the config was not changed)")
    }
    let file = runtime.paths.userConfigFile
    let group = "account \(request.name)"
    let files = try ConfigFiles(paths: runtime.paths)
    if files.merged.groups.contains(where: { $0.name == group }) && !request.replace {
      throw HelperError(
        status: .usage,
        description: "account '\(request.name)' already exists in the config; pass --replace to overwrite it, or pick another name")
    }
    let (entries, pathGroups) = request.splitPathHosts()
    var edited = files.user
    func put(_ name: String, _ entries: [(String, String)]) {
      let newGroup = RawConfig.Group(
        name: name, file: file, entries: entries.map { RawConfig.Entry(key: $0.0, value: $0.1, file: file) })
      if let i = edited.groups.firstIndex(where: { $0.name == name }) {
        edited.groups[i] = newGroup
      } else {
        edited.groups.append(newGroup)
      }
    }
    put(group, entries)
    for name in pathGroups { put(name, [("account", request.name)]) }
    do {
      _ = try ConfigParser.parse(files.system.merged(with: edited))
    } catch ConfigError.invalid(_, let g, let key?, let problem) where g == group {
      // The command's options are at fault, not the file: name the option.
      throw HelperError(
        status: .usage,
        description: problem.hasPrefix("missing")
          ? "account add needs --\(key) \(problem.dropFirst("missing".count).trimmingSpaces()); the config was not changed"
          : "--\(key): \(problem); the config was not changed")
    }
    try KeyFileEditor.setGroup(file: file, group: group, entries: entries)
    for name in pathGroups {
      try KeyFileEditor.setGroup(file: file, group: name, entries: [("account", request.name)])
      runtime.context.say("bound [\(name)] to account '\(request.name)'; run 'tokenbroker setup-git \(request.name)' so that git sends the path")
    }
    runtime.context.say("\(request.replace ? "wrote" : "added") account '\(request.name)' to \(file); sign in with 'tokenbroker login \(request.name)'")
    return .success
  }

  // MARK: remove

  private static func remove(_ args: [String], runtime: Runtime) throws -> ExitStatus {
    let a = try Arguments(args, valued: [], flags: [], usage: Help.usage("account"))
    let name = try a.expectPositionals(["NAME"])[0]
    let file = runtime.paths.userConfigFile
    let group = "account \(name)"
    let files = try ConfigFiles(paths: runtime.paths)
    guard files.user.groups.contains(where: { $0.name == group }) else {
      let elsewhere = files.system.groups.contains { $0.name == group }
      throw HelperError(
        status: .usage,
        description: elsewhere
          ? "account '\(name)' is defined in \(ConfigFiles.systemFile), which tokenbroker does not edit; remove it there"
          : "no account '\(name)' in \(file); nothing to remove (see 'tokenbroker accounts')")
    }
    var edited = files.user
    edited.groups.removeAll { $0.name == group }
    do {
      _ = try ConfigParser.parse(files.system.merged(with: edited))
    } catch ConfigError.invalid(let f, let g, let key, let problem) {
      throw HelperError(
        status: .usage,
        description: "cannot remove account '\(name)': without it, \(f): [\(g)]\(key.map { " " + $0 } ?? ""): \(problem); change or remove that group first (the config was not changed)")
    }
    try KeyFileEditor.removeGroup(file: file, group: group)
    runtime.context.say("removed account '\(name)' from \(file); its tokens stay in the keyring until 'tokenbroker logout \(name)'")
    return .success
  }
}

/// The parsed arguments of `account add`: `NAME`, `--provider P`, any `--KEY VALUE` or
/// `--KEY=VALUE` (each key once), `--replace`.
struct AddRequest {
  var name: String
  var provider: String
  var entries: [(String, String)] = []
  var replace = false

  /// - Throws: `UsageError` for a missing or malformed name, a missing `--provider`, a key given
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
    guard let provider else { throw UsageError("missing --provider (azure, google, sharepoint or oidc)", usage: usage) }
    self.name = name
    self.provider = provider
  }

  /// The account group's entries (`provider` first) and the `[host HOST/PATH]` groups to bind to
  /// the account: a `--hosts` entry with a path (`dev.azure.com/contoso`) cannot be an account's
  /// `hosts` entry (interface.md §2.1: those are hosts and patterns), so it becomes a group of
  /// its own with `account = NAME`; the other entries stay in `hosts` (none left: no `hosts` key).
  func splitPathHosts() -> (entries: [(String, String)], pathGroups: [String]) {
    var entries = [("provider", provider)]
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

/// The config files an edit concerns: the one tokenbroker edits (`user`) and what is read before
/// it (`system`: `/etc/tokenbroker/config`, none with `--config`).
struct ConfigFiles {
  static let systemFile = "/etc/tokenbroker/config"
  var system: RawConfig
  var user: RawConfig
  var merged: RawConfig { system.merged(with: user) }

  /// - Throws: `ConfigError.unreadable` when a file exists but cannot be parsed.
  init(paths: BrokerPaths) throws {
    system = RawConfig()
    for path in paths.configFiles where path != paths.userConfigFile {
      if let raw = try KeyFileLoader.load(file: path, required: false) { system = system.merged(with: raw) }
    }
    user = try KeyFileLoader.load(file: paths.userConfigFile, required: false) ?? RawConfig()
  }
}

import BrokerCore
import BrokerStore
import BrokerWire

/// `tokenbroker account add NAME --provider P [--KEY VALUE]... [--replace]` and
/// `tokenbroker account remove NAME`: edit the user's config file (or the `--config` /
/// `TOKENBROKER_CONFIG` file) line by line (`KeyFileEditor`): every line outside the edited
/// group keeps its bytes, comments and blank lines included (interface.md §2.1, §3).
///
/// The edit is checked first: the config as it would read afterwards (`/etc/tokenbroker/config`
/// merged with the edited file) must parse, and every key given to `add` must be a known account
/// key; otherwise the command exits 64 naming the option (or, for a fault the edit did not cause,
/// the file) and the file is left untouched. `add --replace` of an existing account sets the keys
/// given and keeps the others, as `git config` and `kubectl config set-credentials` do. `remove`
/// of an account the file does not define exits 64. Tokens in the keyring are not touched:
/// `logout` deletes them.
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
    var edit = try KeyFileEditor(file: file)
    let existing = files.system.merged(with: edit.read).groups.first { $0.name == group }
    if let existing {
      guard request.replace else {
        throw HelperError(
          status: .usage,
          description: "account '\(request.name)' already exists in the config; pass --replace to set the keys given (the others stay), or pick another name")
      }
      let provider = existing.entries.last { $0.key == "provider" }?.value
      if let given = request.provider, let provider, given != provider {
        throw HelperError(
          status: .usage,
          description: "account '\(request.name)' has provider \(provider), and --replace keeps its other keys; to make it \(given), run 'tokenbroker account remove \(request.name)' first")
      }
    } else if request.provider == nil {
      throw AddRequest.missingProvider
    }
    let (entries, pathGroups) = request.splitPathHosts()
    if existing != nil && entries.isEmpty && pathGroups.isEmpty {
      throw UsageError("nothing to set: give the keys to change as --KEY VALUE", usage: Help.usage("account"))
    }
    for name in pathGroups where !request.replace {
      let bound = files.system.merged(with: edit.read).groups.first { $0.name == name }?.entries.last { $0.key == "account" }
      if let bound, bound.value != request.name {
        throw HelperError(
          status: .usage,
          description: "[\(name)] is bound to account '\(bound.value)'; pass --replace to bind it to '\(request.name)' (the config was not changed)")
      }
    }
    edit.set(group: group, entries: entries)
    for name in pathGroups { edit.set(group: name, entries: [("account", request.name)]) }
    let edited = try editing { try edit.result() }
    do {
      _ = try ConfigParser.parse(files.system.merged(with: edited))
    } catch ConfigError.invalid(let f, let g, let key?, let problem) where g == group {
      let given = key == "provider" || request.entries.contains { $0.0 == key }
      throw HelperError(
        status: .usage,
        description: problem.hasPrefix("missing")
          ? "account add needs --\(key) \(problem.dropFirst("missing".count).trimmingSpaces()); the config was not changed"
          : given
            ? "--\(key): \(problem); the config was not changed"
            : "\(f): [\(g)] \(key) (kept by --replace): \(problem); give --\(key) VALUE as well, or edit the file (it was not changed)")
    } catch let error as ConfigError {
      throw blamed(error, before: files.system.merged(with: edit.read), doing: "add account '\(request.name)'")
    }
    try editing { try edit.write() }
    for name in pathGroups {
      runtime.context.say("bound [\(name)] to account '\(request.name)'; run 'tokenbroker setup-git \(request.name)' so that git sends the path")
    }
    if existing == nil {
      runtime.context.say("added account '\(request.name)' to \(file); sign in with 'tokenbroker login \(request.name)'")
    } else if !entries.isEmpty {
      runtime.context.say("set \(entries.map(\.0).joined(separator: ", ")) of account '\(request.name)' in \(file) (its other keys stay)")
    }
    return .success
  }

  // MARK: remove

  private static func remove(_ args: [String], runtime: Runtime) throws -> ExitStatus {
    let a = try Arguments(args, command: "account", subcommand: "remove")
    let name = try a.expectPositionals(["NAME"])[0]
    let file = runtime.paths.userConfigFile
    let group = "account \(name)"
    let files = try ConfigFiles(paths: runtime.paths)
    var edit = try KeyFileEditor(file: file)
    guard edit.read.groups.contains(where: { $0.name == group }) else {
      let elsewhere = files.system.groups.contains { $0.name == group }
      throw HelperError(
        status: .usage,
        description: elsewhere
          ? "account '\(name)' is defined in \(ConfigFiles.systemFile), which tokenbroker does not edit; remove it there"
          : "no account '\(name)' in \(file); nothing to remove (see 'tokenbroker accounts')")
    }
    edit.remove(group: group)
    let edited = try editing { try edit.result() }
    do {
      _ = try ConfigParser.parse(files.system.merged(with: edited))
    } catch ConfigError.invalid(let f, let g, let key, let problem) {
      throw HelperError(
        status: .usage,
        description: "cannot remove account '\(name)': without it, \(f): [\(g)]\(key.map { " " + $0 } ?? ""): \(problem); change or remove that group first (the config was not changed)")
    }
    try editing { try edit.write() }
    runtime.context.say("removed account '\(name)' from \(file); its tokens stay in the keyring until 'tokenbroker logout \(name)'")
    return .success
  }

  /// The error to report for `error`, found in the config as an edit would leave it: the
  /// config's own when the config before the edit (`before`) has it too, else one saying the
  /// edit would cause it.
  private static func blamed(_ error: ConfigError, before: RawConfig, doing action: String) -> any Error {
    do { _ = try ConfigParser.parse(before) } catch { return error }
    var what = error.description
    if let advice = what.lastIndex(of: ";") { what = String(what[..<advice]) }
    return HelperError(status: .usage, description: "cannot \(action): \(what); change the options (the config was not changed)")
  }

  /// A `ConfigEditError` as the command's error: exit 64 for a file it cannot edit line by line,
  /// 1 for one that changed or could not be written.
  private static func editing<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let e as ConfigEditError {
      if case .notLineByLine = e { throw HelperError(status: .usage, description: e.description) }
      throw HelperError(status: .failure, description: e.description)
    }
  }
}

/// What is read before the config file tokenbroker edits (`system`: `/etc/tokenbroker/config`,
/// none with `--config`).
struct ConfigFiles {
  static let systemFile = FileLocations.systemConfigFile
  var system: RawConfig

  /// - Throws: `ConfigError.unreadable` when a file exists but cannot be parsed.
  init(paths: BrokerPaths) throws {
    system = RawConfig()
    for path in paths.configFiles where path != paths.userConfigFile {
      if let raw = try KeyFileLoader.load(file: path, required: false) { system = system.merged(with: raw) }
    }
  }
}

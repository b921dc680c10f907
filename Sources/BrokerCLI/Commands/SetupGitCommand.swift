import BrokerCore

/// `tokenbroker setup-git [ACCOUNT] [--dry-run]`: makes git use tokenbroker for every host of the
/// account(s) (interface.md §3; protocols.md §1.6).
///
/// A host with `[host HOST/PATH]` groups also gets `credential.https://HOST.useHttpPath true`, so
/// that git sends the path those groups are chosen by (and only such a host: elsewhere a path
/// would make caching helpers keep one credential per repository).
///
/// For each host it leaves `credential.https://HOST.helper` in the global git config (the file
/// `git config --global` writes: `GIT_CONFIG_GLOBAL`, else `~/.gitconfig`) holding exactly two
/// values: an empty one, which resets helpers inherited from other config files, then the absolute
/// path of this install's `git-credential-tokenbroker` (`GitHelperProgram`; `tokenbroker`, which
/// git runs as `git-credential-tokenbroker` from `PATH`, where there is none). A host already set
/// up that way is left alone, so a second run changes nothing; other values under that key are
/// replaced (and named on stderr), an earlier value of tokenbroker's (`tokenbroker`, or the path
/// of a moved install) is updated. `*.suffix` patterns cannot be git URL contexts (git matches
/// host names exactly there) and are skipped with a note. Nothing secret is on git's argv.
enum SetupGitCommand {
  /// The two values of each host's helper key: the reset, then `helper`.
  static func helperValues(_ helper: String) -> [String] { ["", helper] }

  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let a = try Arguments(args, command: "setup-git")
    let positionals = try a.positionals.count <= 1 ? a.positionals : a.expectPositionals(["ACCOUNT"])
    let config = try runtime.config()
    let accounts = try positionals.first.map { [try config.requireAccount($0)] } ?? config.accounts
    let context = runtime.context
    let hosts = hostsToSetUp(config: config, accounts: accounts, note: { context.say($0) })
    if hosts.isEmpty {
      context.say("no host to set up: add 'hosts = HOST' to an account or a [host HOST] group to the config")
      return .success
    }
    let git = GitConfig(environment: context.environment)
    let resolver = try HostResolver(config: config)
    let helper = GitHelperProgram.helperValue(executable: context.executable, path: context.environment["PATH"])
    let wanted = helperValues(helper)
    if helper == GitHelperProgram.byName,
      let missing = GitHelperChain.missingProgramWarning(path: context.environment["PATH"])
    {
      context.say("warning: " + missing)
    }
    for host in hosts {
      if resolver.hasPathGroups(host: host) {
        try await setUseHttpPath(host: host, git: git, dryRun: a.flag("dry-run"), runtime: runtime)
      }
      let key = "credential.https://\(host).helper"
      let current = try await git.values(key)
      if current == wanted {
        if a.flag("dry-run") { context.say("\(key) is already set up") }
        runtime.verbose("\(key) is already set up")
        continue
      }
      for stale in GitHelperChain.unrunnableHelpers(current) {
        context.say("\(key) names '\(stale)', which is missing or not executable (a moved or removed install); setup-git points it at '\(helper)'")
      }
      let commands = [["--replace-all", key, ""], ["--add", key, helper]]
      if a.flag("dry-run") {
        for c in commands { context.writeOutput(GitConfig.display(c) + "\n") }
        continue
      }
      let others = current.filter { !wanted.contains($0) }
      let ours = others.filter(GitHelperChain.isTokenbroker)
      if !ours.isEmpty {
        context.say("updating the helper of \(key): \(ours.map { "'\($0)'" }.joined(separator: ", ")) becomes '\(helper)'")
      }
      let foreign = others.filter { !GitHelperChain.isTokenbroker($0) }
      if !foreign.isEmpty {
        context.say("replacing the helpers of \(key): \(foreign.map { "'\($0)'" }.joined(separator: ", "))")
      }
      for c in commands { try await git.run(c) }
      context.say("git now asks tokenbroker for https://\(host)")
    }
    return .success
  }

  /// Makes git send `path` to helpers for `host` (`credential.https://HOST.useHttpPath true`), which
  /// its `[host HOST/PATH]` groups need (interface.md §2.1); set only for such hosts.
  private static func setUseHttpPath(host: String, git: GitConfig, dryRun: Bool, runtime: Runtime) async throws {
    let key = "credential.https://\(host).useHttpPath"
    let command = ["--replace-all", key, "true"]
    if try await git.values(key) == ["true"] {
      if dryRun { runtime.context.say("\(key) is already set up") }
      runtime.verbose("\(key) is already set up")
    } else if dryRun {
      runtime.context.writeOutput(GitConfig.display(command) + "\n")
    } else {
      try await git.run(command)
      runtime.context.say("git now sends the repository path of https://\(host) to its helpers (useHttpPath), for the [host \(host)/PATH] groups")
    }
  }

  /// The exact hosts of `accounts`, in config order without repeats: `[host HOST]` and
  /// `[host HOST/PATH]` groups bound to them, then their `hosts` entries. `*.suffix` patterns are reported through `note`.
  static func hostsToSetUp(config: BrokerConfig, accounts: [AccountConfig], note: (String) -> Void) -> [String] {
    let names = Set(accounts.map(\.name))
    var out: [String] = []
    func add(_ h: String) { if !out.contains(h) { out.append(h) } }
    for h in config.hosts where names.contains(h.account) { add(h.host) }
    for account in accounts {
      for entry in account.hosts {
        if entry.hasPrefix("*.") {
          note("skipping '\(entry)' of account '\(account.name)': git matches credential URLs by exact host; add each host (hosts = HOST) to set it up")
        } else {
          add(entry)
        }
      }
    }
    return out
  }
}

import Glibc

/// The credential helpers git runs for one URL, in order, as git's credential.c collects them:
/// every `credential.helper` and every `credential.<PATTERN>.helper` whose pattern matches the URL
/// (urlmatch: scheme, host with `*` labels, port, path prefix, user), in config order, an empty
/// value clearing the helpers before it. `status --url` names the ones besides tokenbroker
/// (bug-cases-3.md X14): one asked before it may answer first, a storage helper after it keeps
/// the token git hands it.
struct GitHelperChain: Equatable {
  /// The helpers in the order git asks them.
  var helpers: [String]

  /// - Parameter entries: `(pattern, value)` as `GitConfig.credentialHelperEntries()` reads them.
  init(entries: [(pattern: String?, value: String)], url: URLParts) {
    var out: [String] = []
    for e in entries where e.pattern.map({ GitHelperChain.matches(pattern: $0, url: url) }) ?? true {
      if e.value.isEmpty { out.removeAll() } else { out.append(e.value) }
    }
    helpers = out
  }

  /// Whether a helper value is tokenbroker: `tokenbroker` (git runs `git-credential-tokenbroker`),
  /// or a command whose program is `tokenbroker` or `git-credential-tokenbroker`.
  static func isTokenbroker(_ helper: String) -> Bool {
    var word = helper.split(separator: " ").first.map(String.init) ?? ""
    if word.hasPrefix("!") { word.removeFirst() }
    let program = word.split(separator: "/").last.map(String.init) ?? word
    return program == "tokenbroker" || program == "git-credential-tokenbroker"
  }

  /// The line to say when the helper value `tokenbroker` cannot run: git runs it as the program
  /// `git-credential-tokenbroker`, found on `PATH` (gitcredentials(7)); nil when an executable of
  /// that name is in one of `path`'s directories.
  static func missingProgramWarning(path: String?) -> String? {
    let name = "git-credential-tokenbroker"
    let dirs = (path ?? "").split(separator: ":", omittingEmptySubsequences: false).map { $0.isEmpty ? "." : String($0) }
    if dirs.contains(where: { access($0 + "/" + name, X_OK) == 0 }) { return nil }
    return "git runs the helper 'tokenbroker' as '\(name)', which is not on PATH, so git cannot ask it; "
      + "run 'make install', or link it beside tokenbroker (ln -s tokenbroker \(name)) in a directory on PATH"
  }

  /// The helper values of tokenbroker's among `values` that name an absolute path git cannot run
  /// (missing, or not executable: an install moved or removed since `setup-git` wrote it).
  /// - Parameter runs: whether a file is there and executable (the file system's answer, by default).
  static func unrunnableHelpers(_ values: [String], runs: (String) -> Bool = InstalledProgram.runs) -> [String] {
    values.filter { value in
      guard isTokenbroker(value), !value.hasPrefix("!"), InstalledProgram.isAbsolutePath(value) else { return false }
      let program = value.split(separator: " ").first.map(String.init) ?? value
      return !runs(program)
    }
  }

  /// Where tokenbroker stands, and what each other helper means for its tokens: one line each.
  /// - Parameter runs: as for `unrunnableHelpers`.
  func warnings(runs: (String) -> Bool = InstalledProgram.runs) -> [String] {
    guard let ours = helpers.firstIndex(where: GitHelperChain.isTokenbroker) else {
      return ["git does not ask tokenbroker for this URL; run 'tokenbroker setup-git'"]
    }
    var out = GitHelperChain.unrunnableHelpers(helpers, runs: runs).map {
      "credential helper '\($0)' is missing or not executable (a moved or removed install), so git cannot ask tokenbroker; run 'tokenbroker setup-git'"
    }
    for (i, h) in helpers.enumerated() where !GitHelperChain.isTokenbroker(h) {
      let name = "credential helper '\(h)'"
      if i < ours {
        out.append("\(name) is asked before tokenbroker: what it has answers first (after a logout, too); run 'tokenbroker setup-git' to reset the helpers for this host")
      } else if GitHelperChain.stores(h) {
        out.append("\(name) is asked after tokenbroker and keeps the tokens git hands it (git stores them after each success); run 'tokenbroker setup-git' to reset the helpers for this host")
      } else {
        out.append("\(name) is asked after tokenbroker, when tokenbroker has no token")
      }
    }
    return out
  }

  /// git's storage helpers (`store`: a plaintext file; `cache`: memory), by name or program.
  static func stores(_ helper: String) -> Bool {
    let word = helper.split(separator: " ").first.map(String.init) ?? ""
    return ["store", "cache", "git-credential-store", "git-credential-cache"].contains(word.split(separator: "/").last.map(String.init) ?? word)
  }

  /// git's urlmatch of a `credential.<PATTERN>` subsection: a pattern without `://` is a host.
  static func matches(pattern: String, url: URLParts) -> Bool {
    let p = URLParts(pattern.contains("://") ? pattern : "https://" + pattern)
    guard let p else { return false }
    if pattern.contains("://") && p.scheme != url.scheme { return false }
    if let user = p.user, user != url.user { return false }
    guard hostMatches(pattern: p.hostName, host: url.hostName), p.port == url.port else { return false }
    let want = p.path.split(separator: "/")
    return want.isEmpty || url.path.split(separator: "/").starts(with: want)
  }

  /// Hosts compare case-insensitively label by label; a `*` label matches any one label.
  static func hostMatches(pattern: String, host: String) -> Bool {
    let p = pattern.lowercased().split(separator: ".", omittingEmptySubsequences: false)
    let h = host.lowercased().split(separator: ".", omittingEmptySubsequences: false)
    return p.count == h.count && zip(p, h).allSatisfy { $0 == "*" || $0 == $1 }
  }
}

/// The parts of an http(s) URL that host resolution and git's urlmatch look at.
struct URLParts: Equatable {
  var scheme: String
  var user: String?
  /// The host name without port, lower-cased.
  var hostName: String
  /// The port, the scheme's default when none is written.
  var port: Int
  /// Whether the URL names its port (then `host` carries it, as git sends `host`).
  var explicitPort: Bool
  /// The path without its leading `/`, percent-decoded (git's `path`); "" for none.
  var path: String

  /// `hostName[:port]` as git sends `host`.
  var host: String { explicitPort ? "\(hostName):\(port)" : hostName }

  /// nil when `text` is not `scheme://[user@]host[:port][/path][?query][#fragment]`.
  init?(_ text: String) {
    guard let (scheme, authority) = GitTarget.parse(url: text) else { return nil }
    self.scheme = scheme
    var rest = Substring(text.drop { $0 != ":" }.dropFirst(3))
    if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
    let slash = rest.firstIndex(of: "/")
    let auth = slash.map { rest[..<$0] } ?? rest
    user = auth.lastIndex(of: "@").map { String(auth[..<$0]) }.flatMap(GitTarget.percentDecode)
    path = slash.map { String(rest[rest.index(after: $0)...]) }.flatMap(GitTarget.percentDecode) ?? ""
    let lower = authority.lowercased()
    let name = HostResolverName.stripPort(lower)
    let defaultPort = scheme == "http" ? 80 : 443
    if name != lower, let colon = lower.lastIndex(of: ":"), let p = Int(lower[lower.index(after: colon)...]) {
      port = p
      explicitPort = true
    } else {
      port = defaultPort
      explicitPort = false
    }
    hostName = name
  }
}

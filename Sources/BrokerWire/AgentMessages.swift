/// The agent protocol's whole vocabulary (interface.md §8): every key, operation and special value.
///
/// One request per connection: the client writes `key=value` lines (the git credential encoder,
/// `CredentialCodec`), `v=1` first, shuts down its writing side, and reads the reply to the end.
/// Lines of text (stdin, stdout, stderr) travel as one `key[]` value each, without their LF; a last
/// line that had no LF is marked with the matching `*-noeol=1` key.
public enum AgentProtocol {
  /// The protocol version every message starts with (`v=1`).
  public static let version = "1"
  /// The largest request or reply, in bytes.
  public static let maxMessageBytes = 65536
  /// The caller's variables that a `run` request carries, because the command's answer depends on
  /// them and the agent runs every command in its own environment: `KUBERNETES_EXEC_INFO` (the
  /// ExecCredential apiVersion kubectl expects, interface.md §3) and `TOKENBROKER_VERBOSE` (the
  /// caller asks for diagnostics, which the agent then returns in the reply's `error`).
  /// Kept sorted: requests carry them in this order.
  public static let forwardedEnvironment = ["KUBERNETES_EXEC_INFO", "TOKENBROKER_VERBOSE"]
  /// The caller's proxy settings, the variables libcurl reads for `https://` and `http://` URLs
  /// (`http_proxy` only in lower case). A `run` request on the agent's own socket carries them and
  /// the command runs with the caller's (set or unset), so that the process that happened to start
  /// the agent does not choose every caller's way out; a forwarded request's are not taken (the far
  /// side's proxy is for the far side's network). Kept sorted.
  public static let proxyEnvironment = [
    "ALL_PROXY", "HTTPS_PROXY", "NO_PROXY", "all_proxy", "http_proxy", "https_proxy", "no_proxy",
  ]
  /// The caller's variables that say where its files are (`BrokerPaths`: the default config, the
  /// file stores, the cache): a `run` request carries them so that the agent answers only a caller
  /// whose set values name the agent's own files (another HOME or XDG_CONFIG_HOME is another
  /// config); the command still runs in the agent's environment.
  public static let pathEnvironment = ["HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"]
  /// Every variable a `run` request carries (`forwardedEnvironment`, `proxyEnvironment`,
  /// `pathEnvironment`), sorted: requests carry them in this order.
  public static let carriedEnvironment = [
    "ALL_PROXY", "HOME", "HTTPS_PROXY", "KUBERNETES_EXEC_INFO", "NO_PROXY", "TOKENBROKER_VERBOSE", "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "all_proxy", "http_proxy", "https_proxy", "no_proxy",
  ]
  /// The `exit` value that means "not served here: run tokenbroker-core yourself".
  public static let notServed: Int32 = -1
  /// How long a connected agent may take to answer a `run` request, in ms: more than the full
  /// program's own worst case (three HTTP attempts of up to 30 s with Retry-After waits, plus
  /// bounded keyring calls). The front's and `exec`'s bound.
  public static let replyBound = 180_000

  /// Message keys.
  public enum Key {
    /// Both directions: the protocol version, always first.
    public static let version = "v"
    /// Request: the operation (`AgentOperation`).
    public static let operation = "op"
    /// `run`: the program name it was called under (argv[0]'s last path component).
    public static let name = "name"
    /// `run`: one argument after argv[0], in order.
    public static let argument = "arg[]"
    /// `run`: the `--config`/`TOKENBROKER_CONFIG` file as an absolute path, or empty.
    public static let config = "config"
    /// `run`: the caller's `DBUS_SESSION_BUS_ADDRESS`, or empty. An agent of another D-Bus session
    /// (its keyring connection belongs to that session) does not serve the call.
    public static let bus = "bus"
    /// `run`: one variable of the caller's environment, `NAME=VALUE`; only the names in
    /// `AgentProtocol.carriedEnvironment` travel, and the agent takes no other.
    public static let environment = "env[]"
    /// `run`: one line of standard input.
    public static let input = "in[]"
    /// `run`: the last `in[]` line had no LF.
    public static let inputNoEOL = "in-noeol"
    /// `drop`: the account whose tokens to forget; absent: every account.
    public static let account = "account"
    /// Reply: the exit status, or `notServed`.
    public static let exit = "exit"
    /// Reply: one line of standard output.
    public static let output = "out[]"
    /// Reply: the last `out[]` line had no LF.
    public static let outputNoEOL = "out-noeol"
    /// Reply: one line of standard error.
    public static let error = "err[]"
    /// Reply: the last `err[]` line had no LF.
    public static let errorNoEOL = "err-noeol"
    /// `status` reply: the agent's process id.
    public static let pid = "pid"
    /// `status` reply: the agent's program version.
    public static let programVersion = "version"
  }
}

/// What a request asks the agent to do.
public enum AgentOperation: String, Sendable, CaseIterable {
  /// Run one hot-path command (git/docker helper action, `token get`) as `tokenbroker-core` would.
  case run
  /// Forget the cached access tokens of one account (or all): sent by login, logout, revoke.
  case drop
  /// Report that the agent runs (`pid`, `version`).
  case status
  /// Answer, then stop accepting and exit once the open requests are answered.
  case stop
  /// `store = encrypted-file`: keep the derived key (`StoreMessage`) for `unlock-timeout`.
  case unlock
  /// Forget the encrypted store's key (and every access token cached from it) at once.
  case lock
  /// One operation on the encrypted store, which only the agent reads and writes (`StoreMessage`).
  case store
}

/// Why an agent message was refused. Never carries a value (values may be tokens).
public enum AgentMessageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The bytes are not a valid key=value message.
  case malformed(CredentialCodecError)
  /// `v` is missing or not `1`.
  case unsupportedVersion
  /// A required key is missing or has a value outside its set.
  case badField(String)
  /// Encoding: a value holds LF, CR or NUL, a line is too long, or the message passes the cap.
  case unencodable

  public var description: String {
    switch self {
    case .malformed(let e): return "malformed agent message: \(e)"
    case .unsupportedVersion: return "unsupported agent protocol version (this program speaks v=\(AgentProtocol.version))"
    case .badField(let key): return "agent message without a valid '\(key)'"
    case .unencodable: return "the message cannot be encoded within \(AgentProtocol.maxMessageBytes) bytes without line breaks"
    }
  }
}

/// Text split into protocol lines and joined back, exactly.
enum AgentLines {
  /// The LF-separated lines of `bytes` (without their LF) and whether the last one had none.
  static func split(_ bytes: [UInt8]) -> (lines: [String], noEOL: Bool)? {
    guard !bytes.isEmpty else { return ([], false) }
    // Line by line, not `split`: an array of ArraySlice<UInt8> is a type the runtime instantiates
    // by name on first use (a tenth of the front's instructions).
    var lines: [String] = []
    var start = 0
    while start < bytes.count {
      let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
      guard let line = String(validating: bytes[start..<end], as: UTF8.self) else { return nil }
      lines.append(line)
      start = end + 1
    }
    return (lines, bytes.last != 0x0A)
  }

  static func join(_ lines: [String], noEOL: Bool) -> [UInt8] {
    var out: [UInt8] = []
    for (i, line) in lines.enumerated() {
      out.append(contentsOf: line.utf8)
      if i < lines.count - 1 || !noEOL { out.append(0x0A) }
    }
    return out
  }
}

extension [CredentialField] {
  /// Encodes the message and enforces the agent's cap.
  func agentEncoded() throws(AgentMessageError) -> [UInt8] {
    let bytes: [UInt8]
    do { bytes = try CredentialCodec.encode(self) } catch { throw .unencodable }
    guard bytes.count <= AgentProtocol.maxMessageBytes else { throw .unencodable }
    return bytes
  }

  /// Appends one field per line of `bytes` under `key`, and `noEOLKey=1` when the last has no LF.
  mutating func appendLines(_ bytes: [UInt8], key: String, noEOLKey: String) throws(AgentMessageError) {
    guard let split = AgentLines.split(bytes) else { throw .unencodable }
    for line in split.lines { append(CredentialField(key, line)) }
    if split.noEOL { append(CredentialField(noEOLKey, "1")) }
  }
}

/// A decoded agent message: its fields (empty `key[]` values kept), after the size and `v=1` checks.
struct AgentFields {
  let fields: [CredentialField]

  init(_ bytes: [UInt8]) throws(AgentMessageError) {
    guard bytes.count <= AgentProtocol.maxMessageBytes else { throw .malformed(.messageTooLarge) }
    do { fields = try CredentialCodec.decodeFields(bytes) } catch { throw .malformed(error) }
    guard fields.first?.key == AgentProtocol.Key.version, fields.first?.value == AgentProtocol.version else {
      throw .unsupportedVersion
    }
  }

  func value(_ key: String) -> String? { fields.first { $0.key == key }?.value }
  func values(_ key: String) -> [String] { fields.filter { $0.key == key }.map(\.value) }
  func lines(_ key: String, noEOLKey: String) -> [UInt8] {
    AgentLines.join(values(key), noEOL: value(noEOLKey) == "1")
  }
}

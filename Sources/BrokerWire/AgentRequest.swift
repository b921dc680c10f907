/// One request to the agent (keys in `AgentProtocol.Key`).
public struct AgentRequest: Sendable, Hashable {
  public var operation: AgentOperation
  /// `run`: the program name (`tokenbroker`, `git-credential-tokenbroker`, …).
  public var name: String
  /// `run`: argv after argv[0].
  public var arguments: [String]
  /// `run`: the explicit config file (absolute), or "" for the default files.
  public var config: String
  /// `run`: the caller's D-Bus session bus address, or "".
  public var bus: String
  /// `run`: the caller's values of `AgentProtocol.carriedEnvironment` that are set (others are
  /// neither sent nor taken).
  public var environment: [String: String]
  /// `run`: all of standard input (valid UTF-8, no CR or NUL).
  public var input: [UInt8]
  /// `drop`: the account, or nil for every account.
  public var account: String?
  /// `unlock`, `lock`, `store`: the fields after `op`, as sent (`StoreMessage` reads them).
  public var store: [CredentialField] = []

  public init(
    operation: AgentOperation, name: String = "", arguments: [String] = [], config: String = "",
    input: [UInt8] = [], account: String? = nil, bus: String = "", environment: [String: String] = [:]
  ) {
    self.bus = bus
    // Empty (the usual call): no filter, whose new Dictionary storage the front would pay for.
    self.environment = environment.isEmpty ? environment : environment.filter { AgentProtocol.carriedEnvironment.contains($0.key) }
    self.operation = operation
    self.name = name
    self.arguments = arguments
    self.config = config
    self.input = input
    self.account = account
  }

  /// `run` with the given call.
  public static func run(
    name: String, arguments: [String], config: String, input: [UInt8], bus: String = "",
    environment: [String: String] = [:]
  ) -> AgentRequest {
    AgentRequest(
      operation: .run, name: name, arguments: arguments, config: config, input: input, bus: bus,
      environment: environment)
  }

  /// The request's bytes.
  /// - Throws: `AgentMessageError.unencodable` when a value holds LF, CR or NUL, the input is not
  ///   UTF-8, a line passes 65535 bytes or the whole passes `AgentProtocol.maxMessageBytes`.
  public func encoded() throws(AgentMessageError) -> [UInt8] {
    typealias K = AgentProtocol.Key
    var f = [CredentialField(K.version, AgentProtocol.version), CredentialField(K.operation, operation.rawValue)]
    switch operation {
    case .run:
      try Self.appendRun(
        to: &f, name: name, arguments: arguments, config: config, bus: bus, environment: { environment[$0] },
        input: input)
    case .drop:
      if let account { f.append(CredentialField(K.account, account)) }
    case .unlock, .lock, .store:
      f += store
    case .status, .stop:
      break
    }
    return try f.agentEncoded()
  }

  /// The bytes of `run(name:arguments:config:input:bus:environment:)`'s request, each variable
  /// of `AgentProtocol.carriedEnvironment` looked up in `environment` (nil: not set) instead of
  /// taken from a Dictionary: the front's path, where building one (the caller's HOME is always
  /// there) costs a run-time metadata instantiation and a scan of every protocol conformance in
  /// the binary (Hashable), more than half of its instructions.
  /// - Throws: as `encoded()`.
  public static func encodedRun(
    name: String, arguments: [String], config: String, input: [UInt8], bus: String,
    environment: (String) -> String?
  ) throws(AgentMessageError) -> [UInt8] {
    typealias K = AgentProtocol.Key
    var f = [CredentialField(K.version, AgentProtocol.version), CredentialField(K.operation, AgentOperation.run.rawValue)]
    try appendRun(to: &f, name: name, arguments: arguments, config: config, bus: bus, environment: environment, input: input)
    return try f.agentEncoded()
  }

  /// A `run` request's fields after `op`.
  private static func appendRun(
    to f: inout [CredentialField], name: String, arguments: [String], config: String, bus: String,
    environment: (String) -> String?, input: [UInt8]
  ) throws(AgentMessageError) {
    typealias K = AgentProtocol.Key
    f.append(CredentialField(K.name, name))
    f.append(CredentialField(K.config, config))
    f.append(CredentialField(K.bus, bus))
    for a in arguments { f.append(CredentialField(K.argument, a)) }
    // In the order of `carriedEnvironment` (sorted).
    for k in AgentProtocol.carriedEnvironment { if let v = environment(k) { f.append(CredentialField(K.environment, k + "=" + v)) } }
    try f.appendLines(input, key: K.input, noEOLKey: K.inputNoEOL)
  }

  /// Parses a request.
  /// - Throws: `AgentMessageError`: malformed, not `v=1`, or an unknown `op` / a `run` without `name`.
  public static func decode(_ bytes: [UInt8]) throws(AgentMessageError) -> AgentRequest {
    typealias K = AgentProtocol.Key
    let m = try AgentFields(bytes)
    guard let op = m.value(K.operation).flatMap(AgentOperation.init(rawValue:)) else { throw .badField(K.operation) }
    var r = AgentRequest(operation: op)
    switch op {
    case .run:
      guard let name = m.value(K.name), !name.isEmpty else { throw .badField(K.name) }
      r.name = name
      r.config = m.value(K.config) ?? ""
      r.bus = m.value(K.bus) ?? ""
      r.arguments = m.values(K.argument)
      for pair in m.values(K.environment) {
        guard let eq = pair.firstIndex(of: "="), AgentProtocol.carriedEnvironment.contains(String(pair[..<eq])) else {
          continue
        }
        r.environment[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
      }
      r.input = m.lines(K.input, noEOLKey: K.inputNoEOL)
    case .drop:
      r.account = m.value(K.account)
    case .unlock, .lock, .store:
      r.store = m.fields.filter { $0.key != K.version && $0.key != K.operation }
    case .status, .stop:
      break
    }
    return r
  }
}

/// The agent's answer: an exit status and what the command wrote, or `AgentProtocol.notServed`.
public struct AgentReply: Sendable, Equatable {
  /// The exit status (0…255), or `AgentProtocol.notServed`.
  public var exit: Int32
  public var output: [UInt8]
  public var error: [UInt8]
  /// `status`: the agent's process id.
  public var pid: Int32?
  /// `status`: the agent's program version.
  public var programVersion: String?

  public init(exit: Int32, output: [UInt8] = [], error: [UInt8] = [], pid: Int32? = nil, programVersion: String? = nil) {
    self.exit = exit
    self.output = output
    self.error = error
    self.pid = pid
    self.programVersion = programVersion
  }

  /// "Not served here": the client runs tokenbroker-core itself.
  public static let notServed = AgentReply(exit: AgentProtocol.notServed)

  /// - Throws: `AgentMessageError.unencodable` (as `AgentRequest.encoded()`).
  public func encoded() throws(AgentMessageError) -> [UInt8] {
    typealias K = AgentProtocol.Key
    var f = [CredentialField(K.version, AgentProtocol.version), CredentialField(K.exit, String(exit))]
    if let pid { f.append(CredentialField(K.pid, String(pid))) }
    if let programVersion { f.append(CredentialField(K.programVersion, programVersion)) }
    try f.appendLines(error, key: K.error, noEOLKey: K.errorNoEOL)
    try f.appendLines(output, key: K.output, noEOLKey: K.outputNoEOL)
    return try f.agentEncoded()
  }

  /// Parses a reply.
  /// - Throws: `AgentMessageError`: malformed, not `v=1`, or no integer `exit`.
  public static func decode(_ bytes: [UInt8]) throws(AgentMessageError) -> AgentReply {
    typealias K = AgentProtocol.Key
    let m = try AgentFields(bytes)
    guard let exit = m.value(K.exit).flatMap({ Int32($0) }), exit >= -1, exit <= 255 else { throw .badField(K.exit) }
    return AgentReply(
      exit: exit, output: m.lines(K.output, noEOLKey: K.outputNoEOL), error: m.lines(K.error, noEOLKey: K.errorNoEOL),
      pid: m.value(K.pid).flatMap { Int32($0) }, programVersion: m.value(K.programVersion))
  }
}

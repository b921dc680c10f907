/// The global options (`CommandTable.globalOptions`: `--config FILE`, `--config=FILE`,
/// `--verbose`) read out of a command line, anywhere before `--`. The one scanner the front
/// (`AgentRoute`) and the full program (BrokerCLI's `GlobalOptions`) use, so both read a command
/// line alike.
public struct GlobalOptionScan: Sendable, Equatable {
  /// The last `--config` value, as written (a relative path stays relative).
  public var configFile: String?
  public var verbose = false
  /// The arguments without the global options; `--` and everything after it kept as given.
  public var words: [String] = []
  /// The arguments without `--config` and its value, `--verbose` kept where it stood: what the
  /// front sends to the agent, which passes `--config` as the request's config file.
  public var withoutConfig: [String] = []
  /// True when `--config` was the last argument, without its value.
  public var missingConfigValue = false

  /// Inlined into its callers: made and taken apart as a whole in the front, this struct's outlined
  /// copy and destroy instantiate the metadata of `String?` and `[String]` by mangled name (measured
  /// with callgrind: 55,000 instructions, a third of a warm call).
  /// - Parameter args: the arguments after the program name.
  @inline(__always) public init(_ args: [String]) {
    var i = 0
    while i < args.count {
      let a = args[i]
      i += 1
      if a == "--" {
        words.append(contentsOf: args[(i - 1)...])
        withoutConfig.append(contentsOf: args[(i - 1)...])
        return
      }
      if a == "--config" {
        guard i < args.count else {
          missingConfigValue = true
          return
        }
        configFile = args[i]
        i += 1
        continue
      }
      // By bytes, not Characters: the front pays for every Character it forms.
      if a.utf8.starts(with: "--config=".utf8) {
        configFile = String(Substring(a.utf8.dropFirst(9)))
        continue
      }
      withoutConfig.append(a)
      if a == "--verbose" { verbose = true } else { words.append(a) }
    }
  }
}

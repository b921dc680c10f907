import BrokerCore
import BrokerWire

/// `tokenbroker help --declarations`: `CommandTable` as one JSON object, for the tests that hold
/// the man page, README and the completions to it. Not a user's command: `--help` does not list it.
///
/// Shape: `{"global": [OPTION], "formats": [..], "providers": [..], "accountKeys": [..],
/// "dockerActions": [..], "commands": [{"name", "usage", "helpTopic", "listing": [[synopsis,
/// summary]], "forms": [{"subcommand"?, "arguments", "options": [OPTION], "takesAccountKeys",
/// "agentRuns", "readsInput"}]}]}`, OPTION `{"name", "value"?: {"kind": text|file|descriptor|choice,
/// "placeholder", "choices"?}}`.
enum DeclarationDump {
  struct Value: Encodable { var kind: String; var placeholder: String; var choices: [String]? }
  struct Option: Encodable { var name: String; var value: Value? }
  struct Form: Encodable {
    var subcommand: String?
    var arguments: [String]
    var options: [Option]
    var takesAccountKeys, agentRuns, readsInput: Bool
  }
  struct Command: Encodable { var name, usage, helpTopic: String; var listing: [[String]]; var forms: [Form] }
  struct Document: Encodable {
    var global: [Option]
    var formats, providers, accountKeys, dockerActions: [String]
    var commands: [Command]
  }

  static func json() -> String {
    JSONText.encode(
      Document(
        global: CommandTable.globalOptions.map(option), formats: CommandTable.formats, providers: CommandTable.providers,
        accountKeys: ConfigKeys.account.sorted(), dockerActions: AgentCommands.dockerActions,
        commands: CommandTable.all.map { c in
          Command(
            name: c.name, usage: c.usage, helpTopic: c.helpTopic, listing: c.listing.map { [$0.synopsis, $0.summary] },
            forms: c.forms.map { f in
              Form(
                subcommand: f.subcommand, arguments: f.arguments, options: f.options.map(option),
                takesAccountKeys: f.takesAccountKeys, agentRuns: f.agentRuns, readsInput: f.readsInput)
            })
        }))
  }

  private static func option(_ o: CommandOption) -> Option {
    let value: Value? =
      switch o.value {
      case .none: nil
      case .text(let p): Value(kind: "text", placeholder: p)
      case .file(let p): Value(kind: "file", placeholder: p)
      case .descriptor(let p): Value(kind: "descriptor", placeholder: p)
      case .choice(let p, let choices): Value(kind: "choice", placeholder: p, choices: choices)
      }
    return Option(name: o.name, value: value)
  }
}

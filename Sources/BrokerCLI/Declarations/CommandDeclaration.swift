import BrokerWire

/// One command of `tokenbroker`, declared once (`CommandTable.all`): its word, the forms it takes
/// (one per subcommand), each form's options, its usage line and its line in the top help. The CLI
/// parses, prints `--help` and suggests names from it; the front routes with it (`AgentRoute`);
/// tests hold the man page, README and the completions to it (`tokenbroker help --declarations`).
struct CommandDeclaration: Sendable {
  /// The command word (`login`, `token`, `get`).
  var name: String
  /// Its lines in `tokenbroker --help`: the left column (`login ACCOUNT [options]`) and a short
  /// phrase; none for a command listed on another's line (`store` on `get`'s).
  var listing: [(synopsis: String, summary: String)]
  /// The usage line printed after a usage error and first in `--help`.
  var usage: String
  /// Whose `--help` text it prints: its own name, or the command it is listed with.
  var helpTopic: String
  /// One form without a subcommand, or one per subcommand (`token get`, `agent run`, ...).
  var forms: [CommandForm]

  init(
    _ name: String, listing: [(synopsis: String, summary: String)], usage: String, helpTopic: String? = nil,
    forms: [CommandForm]
  ) {
    self.name = name
    self.listing = listing
    self.usage = usage
    self.helpTopic = helpTopic ?? name
    self.forms = forms.map { form in
      var form = form
      let key = form.subcommand.map { name + " " + $0 } ?? name
      form.agentRuns = AgentCommands.forms.contains(key)
      form.readsInput = AgentCommands.inputForms.contains(key)
      return form
    }
  }

  /// True when it takes a subcommand word.
  var hasSubcommands: Bool { forms.first?.subcommand != nil }

  /// The form for `subcommand` (nil for a command without subcommands), or nil when it has none such.
  func form(_ subcommand: String?) -> CommandForm? {
    for f in forms where f.subcommand == subcommand { return f }
    return nil
  }
}

/// One way to run a command: `tokenbroker NAME [SUBCOMMAND] ...`.
struct CommandForm: Sendable {
  /// The subcommand word, or nil for a command that takes none.
  var subcommand: String?
  /// The positional arguments, by their usage names (`ACCOUNT`); routing needs only whether any.
  var arguments: [String]
  /// The options it accepts besides the global ones and `--help`.
  var options: [CommandOption]
  /// True when `add` also takes every account config key as `--KEY VALUE` (tokenbroker-config(5)).
  var takesAccountKeys: Bool
  /// True when the resident agent may run it (interface.md §8): the front sends it there
  /// (from `AgentCommands.forms`).
  var agentRuns = false
  /// True when it reads a request on standard input (from `AgentCommands.inputForms`).
  var readsInput = false

  init(
    _ subcommand: String? = nil, arguments: [String] = [], options: [CommandOption] = [], takesAccountKeys: Bool = false
  ) {
    self.subcommand = subcommand
    self.arguments = arguments
    self.options = options
    self.takesAccountKeys = takesAccountKeys
  }

  /// The names (without `--`) of the options that take a value, and of those that take none.
  var valued: [String] { options.filter { $0.value != .none }.map(\.name) }
  var flags: [String] { options.filter { $0.value == .none }.map(\.name) }
}

/// An option, `--NAME` or `--NAME VALUE` (also `--NAME=VALUE`); any option may be repeated, the
/// last one given wins unless the command collects them all (`--scope`).
struct CommandOption: Sendable {
  /// The name without `--`.
  var name: String
  var value: OptionValue

  init(_ name: String, _ value: OptionValue = .none) {
    self.name = name
    self.value = value
  }
}

/// What an option's value is, for help and completions.
enum OptionValue: Sendable, Equatable {
  /// A flag: no value.
  case none
  /// Free text, named by its placeholder in the usage (`S`, `SECONDS`).
  case text(String)
  /// A file name.
  case file(String)
  /// A number of a file descriptor.
  case descriptor(String)
  /// One of these words.
  case choice(String, [String])
}

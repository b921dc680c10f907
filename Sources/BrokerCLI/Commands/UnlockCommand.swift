import BrokerCore

/// `tokenbroker unlock [--passphrase-fd N] [--create]` (interface.md §3): hands the encrypted
/// store's key to the agent for `unlock-timeout` seconds, creating the store when there is none:
/// on a terminal (the new passphrase asked twice), or from a descriptor with `--create`
/// (bug-cases-3.md X17: a script must not make an empty store where it did not mean to).
enum UnlockCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let usage = Help.usage("unlock")
    let a = try Arguments(args, command: "unlock")
    _ = try a.expectPositionals([])
    var fd: Int32?
    if let text = a.value("passphrase-fd") {
      guard let n = Int32(text), n >= 0 else { throw UsageError("--passphrase-fd needs a file descriptor number, not '\(text)'", usage: usage) }
      fd = n
    }
    try await UnlockFlow.run(runtime: runtime, passphraseFD: fd, create: a.flag("create"))
    return .success
  }
}

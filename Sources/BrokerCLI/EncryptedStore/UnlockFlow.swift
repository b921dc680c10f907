import BrokerCore
import BrokerStore
import BrokerSystem
import BrokerWire
import Glibc

/// Unlocking `store = encrypted-file` (interface.md §3 `unlock`, §7.1): the agent (started when
/// none runs) reports the salt and Argon2id limits in the file's header, or that there is no
/// store yet; the passphrase is read from the terminal without echo (twice for a new store) or as
/// one line from a descriptor; the key is derived here and only the key goes to the agent, which
/// checks it against the file (or creates the store) before keeping it for `unlock-timeout`. The
/// passphrase never leaves this process and is zeroed once the key is derived.
enum UnlockFlow {
  /// - Parameter passphraseFD: where to read the passphrase; nil: the terminal.
  /// - Throws: `UsageError` (no terminal, not this store), `HelperError`, `StoreError`
  ///   (`.wrongPassphrase`, `.encryptedFileDamaged`, …).
  static func run(runtime: Runtime, passphraseFD: Int32?) async throws {
    let settings = try runtime.config().settings
    guard settings.store == .encryptedFile else {
      throw UsageError(
        "unlock is for [broker] store = encrypted-file (this config uses store = \(settings.store.rawValue))",
        usage: Help.usage("unlock"))
    }
    guard passphraseFD != nil || runtime.context.isInteractive else {
      throw UsageError("no terminal to ask for the passphrase; pass it on a file descriptor with --passphrase-fd N", usage: Help.usage("unlock"))
    }
    let endpoint = AgentCommand.endpoint(runtime)
    _ = try await AgentCommand.ensureRunning(runtime: runtime, endpoint: endpoint)
    let path = runtime.paths.encryptedTokenFile
    let store = AgentHeldStore(socketPath: endpoint.socketPath, path: path)
    let header = try await store.parameters()
    let parameters: KDFParameters
    if header.count == 3, let salt = StoreRequestHandler.bytes(hex: header[0]), let ops = UInt32(header[1]), let mem = UInt64(header[2]) {
      parameters = KDFParameters(salt: salt, opsLimit: ops, memLimit: mem)
    } else {
      parameters = .fresh()
    }
    let create = header.isEmpty
    var passphrase = try await read(runtime.context, fd: passphraseFD, path: path, create: create)
    defer { Sodium.zero(&passphrase) }
    let key = try await EncryptedFileStore.deriveKey(passphrase: passphrase, parameters: parameters)
    Sodium.zero(&passphrase)
    typealias K = StoreMessage.Key
    var hex = key.hexDigits()
    defer { Sodium.zero(&hex) }
    var request = AgentRequest(operation: .unlock)
    request.store = [
      CredentialField(K.path, path), CredentialField(K.key, String(decoding: hex, as: UTF8.self)),
      CredentialField(K.salt, StoreRequestHandler.hex(parameters.salt)), CredentialField(K.opsLimit, String(parameters.opsLimit)),
      CredentialField(K.memLimit, String(parameters.memLimit)), CredentialField(K.create, create ? "1" : "0"),
      CredentialField(K.timeout, String(settings.unlockTimeout)),
    ]
    _ = try await AgentHeldStore.send(request, socketPath: endpoint.socketPath, path: path)
    let until = settings.unlockTimeout == 0 ? "until the agent exits" : "for \(settings.unlockTimeout) s"
    runtime.context.say((create ? "created the encrypted token store \(path); " : "") + "unlocked \(until) (tokenbroker lock locks it)")
  }

  /// The passphrase: one line from `fd`, or from the terminal with echo off (asked twice when
  /// `create`). Never empty.
  private static func read(_ context: ProcessContext, fd: Int32?, path: String, create: Bool) async throws -> [UInt8] {
    let usage = Help.usage("unlock")
    if let fd {
      guard fcntl(fd, F_GETFD) >= 0 else { throw UsageError("file descriptor \(fd) is not open", usage: usage) }
      guard let line = try await SecretLine.read(fd: fd), !line.isEmpty else {
        throw UsageError("no passphrase on file descriptor \(fd) (one line is read)", usage: usage)
      }
      return line
    }
    let what = create ? "a new passphrase for \(path)" : "the passphrase for \(path)"
    var first = try await ask(context, "enter \(what) (not shown): ")
    guard !first.isEmpty else { throw UsageError("the passphrase is empty; nothing was changed", usage: usage) }
    guard create else { return first }
    var second = try await ask(context, "enter it again: ")
    defer { Sodium.zero(&second) }
    guard first == second else {
      Sodium.zero(&first)
      throw HelperError(status: .failure, description: "the two passphrases differ; nothing was created; run 'tokenbroker unlock' again")
    }
    return first
  }

  private static func ask(_ context: ProcessContext, _ prompt: String) async throws -> [UInt8] {
    let line = try await SecretLine.read(fd: 0) { context.writeError("tokenbroker: " + prompt) }
    context.writeError("\n")
    return line ?? []
  }
}

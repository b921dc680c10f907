import BrokerCore
import BrokerStore
import BrokerSystem
import BrokerWire
import Glibc

/// Unlocking `store = encrypted-file` (interface.md §3 `unlock`, §7.1), in the order that keeps
/// a passphrase from being asked for in vain (bug-cases-3.md X15, X17): no terminal and no
/// descriptor is refused at once; the agent is reached (started when none runs) and reports the
/// salt and Argon2id limits in the file's header, or that there is no store yet; the memory those
/// limits need is checked against this process's limits (`MemoryRoom`); only then is the
/// passphrase read, from the terminal without echo (twice for a new store) or as one line from a
/// descriptor. A new store is created from a descriptor only with `--create` (a terminal always
/// may: it asks twice). The key is derived here and only the key goes to the agent, which checks
/// it against the file (or creates the store) before keeping it for `unlock-timeout`. The
/// passphrase never leaves this process and is zeroed once the key is derived.
enum UnlockFlow {
  /// - Parameters:
  ///   - passphraseFD: where to read the passphrase; nil: the terminal.
  ///   - create: `--create`: a store may be created from `passphraseFD` when there is none.
  /// - Throws: `UsageError` (no terminal, not this store, a closed descriptor), `HelperError`
  ///   (no agent), `StoreError` (`.encryptedMissing`, `.outOfMemory`, `.wrongPassphrase`,
  ///   `.createdMeanwhile`, `.agentServesAnotherStore`, `.encryptedFileDamaged`, …).
  static func run(runtime: Runtime, passphraseFD: Int32?, create: Bool = false) async throws {
    let settings = try runtime.config().settings
    let usage = Help.usage("unlock")
    guard settings.store == .encryptedFile else {
      throw UsageError(
        "unlock is for [broker] store = encrypted-file (this config uses store = \(settings.store.rawValue)); "
          + "to keep tokens in an encrypted file instead, set store = encrypted-file under [broker] in "
          + (runtime.paths.configFiles.last ?? runtime.paths.userConfigFile), usage: usage)
    }
    if let fd = passphraseFD {
      guard fcntl(fd, F_GETFD) >= 0 else { throw UsageError("file descriptor \(fd) is not open", usage: usage) }
    } else if !runtime.context.isInteractive {
      throw UsageError("no terminal; use --passphrase-fd N to pass the passphrase on a file descriptor", usage: usage)
    }
    let endpoint = AgentCommand.endpoint(runtime)
    _ = try await AgentCommand.ensureRunning(runtime: runtime, endpoint: endpoint)
    let path = runtime.paths.encryptedTokenFile
    let existing = try await headerParameters(AgentHeldStore(socketPath: endpoint.socketPath, path: path), path: path)
    let room = await KeyDerivation.room()
    runtime.verbose("memory for Argon2id: " + (room.bytes == nil ? "no limit found" : room.description))
    let candidates: [KDFParameters]
    if let existing {
      try KeyDerivation.check(existing, room: room, path: path)
      candidates = [existing]
    } else {
      guard passphraseFD == nil || create else { throw StoreError.encryptedMissing(path: path) }
      candidates = try KeyDerivation.newStoreCandidates(room: room, path: path)
    }
    var passphrase = try await read(runtime.context, fd: passphraseFD, path: path, create: existing == nil)
    defer { Sodium.zero(&passphrase) }
    let key: StoreKey
    if existing == nil {
      key = try await KeyDerivation.deriveNew(passphrase: passphrase, candidates: candidates, path: path)
    } else {
      key = try await KeyDerivation.derive(passphrase: passphrase, parameters: candidates[0], path: path)
    }
    Sodium.zero(&passphrase)
    let reply = try await handOver(key, create: existing == nil, path: path, socket: endpoint.socketPath, timeout: settings.unlockTimeout)
    if AgentHeldStore.lines(reply).contains(StoreMessage.keyNotLocked) {
      runtime.context.say(
        "the agent could not lock the store's key in memory (RLIMIT_MEMLOCK, ulimit -l); it holds it all the same, but it may reach swap: raise ulimit -l (LimitMEMLOCK= in a systemd unit) to keep it out")
    }
    let until = settings.unlockTimeout == 0 ? "until the agent exits" : "for \(settings.unlockTimeout) s"
    let created = existing == nil ? createdNote(path: path, parameters: key.parameters, room: room) : ""
    runtime.context.say(created + "unlocked \(until) (tokenbroker lock locks it)")
  }

  /// "created …; ", saying so when memory limits made the new store's Argon2id lighter.
  private static func createdNote(path: String, parameters p: KDFParameters, room: MemoryRoom) -> String {
    guard p.memLimit < KDFParameters.defaultMemLimit else { return "created the encrypted token store \(path); " }
    let usual = KDFParameters.defaultMemLimit >> 20
    let why = room.bytes == nil ? "" : ": \(room)"
    return "created the encrypted token store \(path) (Argon2id: \(p.opsLimit) passes over \(p.memLimit >> 20) MiB, less than the usual \(usual) MiB, as memory is limited here\(why)); "
  }

  /// The salt and limits in the store's header as the agent read them, or nil when there is no
  /// store yet.
  private static func headerParameters(_ store: AgentHeldStore, path: String) async throws -> KDFParameters? {
    let header = try await store.parameters()
    guard !header.isEmpty else { return nil }
    guard header.count == 3, let salt = StoreMessage.bytes(hex: header[0]), let ops = UInt32(header[1]),
      let mem = UInt64(header[2])
    else { throw StoreError.file(path: path, detail: "the agent's answer about its header is malformed; update tokenbroker") }
    return KDFParameters(salt: salt, opsLimit: ops, memLimit: mem)
  }

  /// Sends the key (and its parameters) to the agent; its reply's `out[]` bytes.
  private static func handOver(_ key: StoreKey, create: Bool, path: String, socket: String, timeout: Int) async throws -> [UInt8] {
    typealias K = StoreMessage.Key
    var hex = key.hexDigits()
    defer { Sodium.zero(&hex) }
    let p = key.parameters
    var request = AgentRequest(operation: .unlock)
    request.store = [
      CredentialField(K.path, path), CredentialField(K.key, String(decoding: hex, as: UTF8.self)),
      CredentialField(K.salt, StoreMessage.hex(p.salt)), CredentialField(K.opsLimit, String(p.opsLimit)),
      CredentialField(K.memLimit, String(p.memLimit)), CredentialField(K.create, create ? "1" : "0"),
      CredentialField(K.timeout, String(timeout)),
    ]
    return try await AgentHeldStore.send(request, socketPath: socket, path: path)
  }

  /// The passphrase: one line from `fd`, or from the terminal with echo off (asked twice when
  /// `create`). Never empty.
  private static func read(_ context: ProcessContext, fd: Int32?, path: String, create: Bool) async throws -> [UInt8] {
    let usage = Help.usage("unlock")
    if let fd {
      guard var line = try await SecretLine.read(fd: fd), !line.isEmpty else {
        throw UsageError("no passphrase on file descriptor \(fd) (one line is read)", usage: usage)
      }
      if create, let refusal = tooShort(line) {
        Sodium.zero(&line)
        throw refusal
      }
      return line
    }
    let what = create ? "a new passphrase for \(path)" : "the passphrase for \(path)"
    var first = try await ask(context, "enter \(what) (not shown): ")
    guard !first.isEmpty else { throw UsageError("the passphrase is empty; nothing was changed", usage: usage) }
    guard create else { return first }
    if let refusal = tooShort(first) {
      Sodium.zero(&first)
      throw refusal
    }
    var second = try await ask(context, "enter it again: ")
    defer { Sodium.zero(&second) }
    guard first == second else {
      Sodium.zero(&first)
      throw HelperError(status: .failure, description: "the two passphrases differ; nothing was created; run 'tokenbroker unlock' again")
    }
    return first
  }

  /// A new store's passphrase is at least `minimumNewLength` characters: the file can be copied
  /// and guessed at offline, where only the passphrase and Argon2id's cost stand in the way.
  static let minimumNewLength = 8

  private static func tooShort(_ passphrase: [UInt8]) -> UsageError? {
    let characters = String(validating: passphrase, as: UTF8.self)?.count ?? passphrase.count
    guard characters < minimumNewLength else { return nil }
    return UsageError(
      "a new store's passphrase needs at least \(minimumNewLength) characters (this one has \(characters)); nothing was created",
      usage: Help.usage("unlock"))
  }

  private static func ask(_ context: ProcessContext, _ prompt: String) async throws -> [UInt8] {
    let line = try await SecretLine.read(fd: 0) { context.writeError("tokenbroker: " + prompt) }
    context.writeError("\n")
    return line ?? []
  }
}

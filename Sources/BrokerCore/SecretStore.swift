/// The kind of a stored item (interface.md §7, attribute `kind`).
public enum ItemKind: String, Sendable, CaseIterable {
  case refreshToken = "refresh-token"
  case accessToken = "access-token"
  case cookies
}

/// Identifies one stored item. Every field becomes a (non-secret) Secret Service attribute:
/// `application = tokenbroker`, `account`, `kind`, and for access tokens `scopes` (the canonical
/// scope set).
public struct ItemKey: Sendable, Hashable, CustomStringConvertible {
  public var account: String
  public var kind: ItemKind
  /// The canonical scope set (`ScopeSet.canonical`); only for `.accessToken` items, else nil.
  public var scopes: String?

  public init(account: String, kind: ItemKind, scopes: String? = nil) {
    self.account = account
    self.kind = kind
    self.scopes = kind == .accessToken ? (scopes ?? "") : nil
  }

  public static func refreshToken(_ account: String) -> ItemKey { ItemKey(account: account, kind: .refreshToken) }
  public static func accessToken(_ account: String, _ scopes: ScopeSet) -> ItemKey {
    ItemKey(account: account, kind: .accessToken, scopes: scopes.canonical)
  }

  /// The attributes stored with the item, in schema order.
  public var attributes: [(String, String)] {
    var a = [("application", "tokenbroker"), ("account", account), ("kind", kind.rawValue)]
    if let scopes { a.append(("scopes", scopes)) }
    return a
  }

  /// The item label: `tokenbroker: <ACCOUNT> (<provider>) <kind>`.
  public func label(provider: String) -> String { "tokenbroker: \(account) (\(provider)) \(kind.rawValue)" }

  public var description: String {
    "\(account)/\(kind.rawValue)" + (scopes.map { " [\($0)]" } ?? "")
  }
}

/// Where refresh tokens, cached access tokens and cookies live.
///
/// Implementation requirements (checked by the `SecretStore` behaviour suite in BrokerStoreTests,
/// run against every implementation):
/// - `load` of an absent item returns nil; it never returns another application's or account's item.
/// - A locked collection throws `StoreError.locked`, never nil ("not signed in") and never deletes.
/// - `save` replaces the item with the same key (one item per key, also under concurrent saves)
///   and reads it back; a read-back that differs throws `StoreError.readBackMismatch`.
/// - `delete` of an absent item succeeds.
/// - No call blocks longer than the implementation's bound (10 s for the Secret Service).
/// - Errors never carry a secret.
public protocol SecretStore: Sendable {
  /// The stored document of `key`, or nil when there is none.
  /// - Throws: `StoreError`.
  func load(_ key: ItemKey) async throws -> Secret?
  /// Creates or replaces the item `key` with `secret`, labelled `label`.
  /// - Throws: `StoreError`.
  func save(_ key: ItemKey, label: String, secret: Secret) async throws
  /// Deletes the item `key` if present.
  /// - Throws: `StoreError`.
  func delete(_ key: ItemKey) async throws
  /// The keys of every tokenbroker item, or only those of `account`.
  /// - Throws: `StoreError`.
  func keys(account: String?) async throws -> [ItemKey]
  /// Checks, without writing and without raising a prompt, that a `save` of `key` (nil: of a new
  /// item) could succeed now, so `login` fails before the user signs in and a refresh before it
  /// spends the refresh token, rather than after (the Secret Service: the collection the item
  /// would be written to exists and is unlocked). The default implementation checks nothing.
  /// - Throws: `StoreError` (`.noCollection`, `.locked`, `.unavailable`, `.timedOut`, …).
  func preflightWrite(for key: ItemKey?) async throws
}

extension SecretStore {
  public func preflightWrite(for key: ItemKey?) async throws {}

  /// `preflightWrite(for: nil)`.
  public func preflightWrite() async throws { try await preflightWrite(for: nil) }

  /// Deletes every item of `account` (optionally only of one kind).
  public func deleteAll(account: String, kind: ItemKind? = nil) async throws {
    for key in try await keys(account: account) where kind == nil || key.kind == kind {
      try await delete(key)
    }
  }
}

/// Errors of every `SecretStore` (all map to exit 5).
public enum StoreError: Error, Sendable, Equatable {
  /// The collection holding the item (or the default collection, for a store) is locked.
  case locked
  /// The unlock prompt was dismissed (login only).
  case unlockDismissed
  /// The unlock prompt was shown and nobody answered it within `seconds` (login only): the
  /// daemon itself answered, so it is no reason to restart it.
  case unlockUnanswered(seconds: Int)
  /// The default collection is unlocked but its items that match read locked: the provider holds
  /// each item back until the user allows the program that asks (KeePassXC's "Confirm when
  /// passwords are retrieved by clients", README "Keyrings").
  case itemsWithheld
  /// The service is there but cannot make the encrypted session every call needs; `detail` is its
  /// message. kwalletd says "maybe libqca-ossl is missing" without the QCA plugins package.
  case sessionRefused(detail: String)
  /// There is no default collection to store into (keyring-notes.md: no daemon had created one).
  case noCollection
  /// No Secret Service could be reached: no session bus, no daemon, activation failed. `detail` is
  /// the library's message (contains no secret).
  case unavailable(detail: String)
  /// A call to the Secret Service did not finish within `seconds`.
  case timedOut(seconds: Int)
  /// The item written could not be read back as written.
  case readBackMismatch
  /// A stored document is not one tokenbroker wrote (bad JSON or unknown version).
  case corrupt(item: String)
  /// The plaintext file store failed: path and the system's reason.
  case file(path: String, detail: String)
  /// Any other Secret Service error.
  case backend(detail: String)
  /// `store = encrypted-file`: the agent holds no key for the store at `path` (never unlocked,
  /// `unlock-timeout` passed, `tokenbroker lock`, or the agent restarted).
  case encryptedLocked(path: String)
  /// `store = encrypted-file`: there is no store at `path` yet, and none is created without
  /// `unlock --create` (or a terminal) (bug-cases-3.md X17).
  case encryptedMissing(path: String)
  /// The agent at `socket` serves the encrypted store at `served`, not the caller's `path` (it was
  /// started with another `XDG_DATA_HOME`); it never opens another file (bug-cases-3.md X17).
  case agentServesAnotherStore(path: String, served: String, socket: String)
  /// `unlock --create`: another process created the store at `path` between this one finding none
  /// and creating it; the store that won is kept.
  case createdMeanwhile(path: String)
  /// `unlock`: the passphrase does not open the store at `path` (or the file was changed); nothing
  /// was changed.
  case wrongPassphrase(path: String)
  /// Argon2id cannot have the `neededMiB` MiB that the store at `path` asks for (a new store:
  /// its smallest choice): `room` names the tightest limit and what it leaves, or is empty when
  /// only the allocation failed. Never shown as a wrong passphrase (bug-cases-3.md X15).
  case outOfMemory(path: String, neededMiB: UInt64, room: String, newStore: Bool)
  /// The encrypted store at `path` cannot be used with the key the agent holds, or at all: `detail`
  /// says why (truncated, another format, fails authentication). The file is never overwritten.
  case encryptedFileDamaged(path: String, detail: String)
  /// libsodium could not run (no memory for Argon2id's work area).
  case crypto(detail: String)
  /// The agent that holds the encrypted store's key did not answer at `socket`.
  case agentUnreachable(socket: String)
  /// A refresh got a rotated refresh token for `account` that could not be written (`cause`: the
  /// store's message); the provider has replaced the old token, so the account needs a new
  /// sign-in unless a later write succeeds (the agent keeps the token and tries again).
  case rotatedNotStored(account: String, cause: String)
}

extension StoreError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .locked:
      return "the keyring is locked; unlock it (for example by logging in to the desktop, or with 'tokenbroker login ACCOUNT' on a terminal) and try again"
    case .unlockDismissed: return "the keyring unlock prompt was dismissed; unlock the keyring and try again"
    case .unlockUnanswered(let seconds):
      return "the keyring's unlock dialog was not answered within \(seconds) s; unlock the keyring on the desktop (its dialog may be behind other windows) and try again"
    case .itemsWithheld:
      return "the keyring holds tokenbroker's items back until you allow it (KeePassXC's 'Confirm when passwords are retrieved by clients', which tokenbroker never raises); turn that off in KeePassXC's settings, under Secret Service Integration, and try again"
    case .sessionRefused(let detail):
      if detail.lowercased().contains("qca") {
        return "the keyring cannot make an encrypted session (\(detail)); KWallet needs the QCA plugins for it: install libqca-qt5-2-plugins (Debian: apt-get install libqca-qt5-2-plugins; Plasma 6: libqca-qt6-plugins), restart kwalletd (or log in again) and try again"
      }
      return "the keyring cannot make an encrypted session (\(detail)); check the keyring daemon and try again"
    case .noCollection:
      return "the Secret Service has no keyring collection; unlock or create one (for example start gnome-keyring-daemon --unlock), or on a machine without a desktop session set 'store = encrypted-file' in [broker] and run 'tokenbroker unlock'"
    case .unavailable(let detail):
      return "cannot reach the Secret Service (\(detail)); on a machine without a desktop session set 'store = encrypted-file' in [broker] and run 'tokenbroker unlock', or start a keyring daemon such as gnome-keyring in this session"
    case .timedOut(let seconds):
      return "the Secret Service did not answer within \(seconds) s; check the keyring daemon (restart it) and try again"
    case .readBackMismatch:
      return "the keyring did not read back what was written; check the keyring daemon, or set 'store = file' in [broker]"
    case .corrupt(let item): return "the stored item \(item) is not readable; run 'tokenbroker logout' for that account and sign in again"
    case .file(let path, let detail): return "cannot use the token file '\(path)' (\(detail)); fix its permissions or remove it"
    case .backend(let detail): return "the Secret Service failed (\(detail)); check the keyring daemon and try again"
    case .encryptedLocked(let path):
      return "the encrypted token store \(path) is locked; run 'tokenbroker unlock' and try again"
    case .encryptedMissing(let path):
      return "there is no encrypted token store at \(path) yet; create it with 'tokenbroker unlock --create --passphrase-fd N' (or 'tokenbroker unlock' on a terminal)"
    case .agentServesAnotherStore(let path, let served, let socket):
      return "the agent at \(socket) serves the encrypted token store \(served), not \(path) (it was started with another XDG_DATA_HOME); run 'tokenbroker agent stop' and try again"
    case .createdMeanwhile(let path):
      return "a store was created meanwhile; unlock again: another process created \(path) while this one was creating it, and that store is kept (it opens with the passphrase given there)"
    case .wrongPassphrase(let path):
      return "wrong passphrase or damaged file: the encrypted token store \(path) does not open with this passphrase; nothing was changed; run 'tokenbroker unlock' again (passphrase lost? move the file away: 'tokenbroker unlock' then makes a new store, and each account needs 'tokenbroker login' again)"
    case .outOfMemory(let path, let needed, let room, let newStore):
      let need = newStore ? "a new store needs at least \(needed) MiB" : "this store needs \(needed) MiB"
      let limit = room.isEmpty ? "" : ", and \(room)"
      return "could not derive the key: not enough memory (\(need)) for the encrypted token store \(path)\(limit); "
        + (newStore ? "nothing was created" : "the file is unchanged")
        + ": raise the limit (ulimit -v, ulimit -d, the cgroup's memory.max) or free memory, and run 'tokenbroker unlock' again"
    case .encryptedFileDamaged(let path, let detail):
      return "the encrypted token store \(path) \(detail); it is left as it is: restore it from a backup, or move it away and sign in again"
    case .crypto(let detail): return "libsodium failed (\(detail)); check the libsodium23 package and try again"
    case .agentUnreachable(let socket):
      return "the agent at \(socket) did not answer; run 'tokenbroker agent stop', then 'tokenbroker unlock'"
    case .rotatedNotStored(let account, let cause):
      return "\(cause) (the provider has replaced the refresh token of '\(account)' and the new one could not be stored: "
        + "if it cannot be written, '\(account)' will need 'tokenbroker login \(account)')"
    }
  }
}

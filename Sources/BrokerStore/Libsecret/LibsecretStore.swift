public import BrokerCore
internal import CLibsecret
internal import Dispatch

/// The `SecretStore` over the freedesktop Secret Service through libsecret (interface.md §7).
///
/// Items use the schema `org.tokenbroker.Secret` (`cbroker_token_schema()`), the attributes of
/// `ItemKey.attributes`, the caller's label, and the JSON document as a text/plain secret: a first
/// item in the collection behind the `default` alias, a replacement in the collection of the item
/// it replaces.
///
/// Behaviour (keyring-notes.md, bug-cases.md B01–B06):
/// - Searches never unlock (`SECRET_SEARCH_ALL` without `SECRET_SEARCH_UNLOCK`) and nothing but
///   `unlock(timeout:)` raises a prompt. A matching item that is locked is `StoreError.locked`,
///   never "absent"; nothing is deleted or overwritten because something was locked.
/// - Every operation is bounded by `timeout` (default 10 s): a `GCancellable` cancelled by a timer
///   ends it with `StoreError.timedOut`, also when D-Bus activation or a reply never comes; should
///   libsecret ignore the cancellation (a prompt that never completes properly), the caller still
///   gets `.timedOut` 2 s later while the stuck call keeps the libsecret queue.
/// - Duplicates (same attributes): `load` uses the newest by the document (`DocumentAge`) and
///   deletes the other unlocked ones; `save` writes a new item, then deletes the older ones.
/// - Items with tokenbroker's attributes but another schema (`xdg:schema` of an older writer or
///   another tool; none: gnome-keyring's `org.freedesktop.Secret.Generic`) are never read as
///   tokenbroker's and never touched by `load` or `save` (such an item may hold a refresh token);
///   `keys` lists them and `delete` deletes them, so `logout` and `revoke` leave no copy behind.
/// - An item that vanishes under an operation (another process deleted it between the search and
///   the next call on it: a `logout` racing a `token get`) is absent, never a keyring failure:
///   `load` searches again, `delete` counts it deleted, `save` counts its write done.
/// - The blocking `*_sync` calls run on one serial dispatch queue, never on the cooperative pool.
public final class LibsecretStore: SecretStore {
  private let timeoutMilliseconds: Int
  private let writeLock: String?
  /// The serial queue every libsecret call of the process runs on (`perform`, `connectAhead`).
  static let queue = DispatchQueue(label: "tokenbroker.store.libsecret")

  /// - Parameters:
  ///   - timeout: seconds one operation may take (fractions allowed for tests); the
  ///     interface.md §7 bound is 10 s.
  ///   - writeLock: a lock file in a private directory (the runtime directory) that every
  ///     tokenbroker process holds around a `save`, so concurrent writers of one item do not fail
  ///     each other's read-back (bug-cases.md B06); nil: no lock.
  public init(timeout: Double = 10, writeLock: String? = nil) {
    timeoutMilliseconds = max(1, Int(timeout * 1000))
    self.writeLock = writeLock
  }

  /// The libsecret version this program was built against, e.g. `libsecret 0.20.5`.
  public static var libraryVersion: String {
    "libsecret \(SECRET_MAJOR_VERSION).\(SECRET_MINOR_VERSION).\(SECRET_MICRO_VERSION)"
  }

  /// The newest unlocked matching item's document, or nil when no item matches. Of duplicates
  /// (same attributes), the newest by `DocumentAge` is read (by `Modified`, then D-Bus path, only
  /// between documents that do not tell); the others are deleted, unless a `save` holds
  /// `writeLock` now (between writing its item and deleting the older ones: it tidies them).
  /// None found while another process holds `writeLock` is looked for again when it is released.
  /// - Throws: `.locked` when only locked items match, or none does while the default collection
  ///   is locked (nothing can be known then); `.corrupt` when the secret is not UTF-8;
  ///   `.unavailable`, `.timedOut`, `.backend`.
  public func load(_ key: ItemKey) async throws -> Secret? {
    try await perform { [writeLock] session throws(StoreError) in
      if let secret = try Self.newest(key, in: session, writeLock: writeLock) { return secret }
      // None while another process holds `writeLock`: its `save` may be between a delete and
      // the write it makes again. Looked for again once it is done, or at the deadline (then the
      // search says "timed out", not "absent").
      guard let writeLock, WriteLock(path: writeLock, keepWaiting: { false }) == nil else { return nil }
      _ = WriteLock(path: writeLock, keepWaiting: { !session.deadline.expired })
      return try Self.newest(key, in: session, writeLock: writeLock)
    }
  }

  /// `load`'s search: the newest unlocked matching item's document, or nil.
  private static func newest(_ key: ItemKey, in session: LibsecretSession, writeLock: String?) throws(StoreError)
    -> Secret?
  {
    // The usual case, one item of ours and unlocked, in two round trips; anything else below.
    if let bytes = try session.soleSecret(key.attributes) {
      guard let text = String(validating: bytes, as: UTF8.self) else { throw StoreError.corrupt(item: key.description) }
      return Secret(text)
    }
    for _ in 1...3 {
      let items = try session.search(key.attributes)
      let unlocked = items.filter { !$0.isLocked }
      if unlocked.isEmpty {
        if items.isEmpty, try !session.defaultCollectionIsLocked() { return nil }
        throw try session.lockedItemsError(items)
      }
      let read = try session.stored(unlocked)
      guard let newest = read.max(by: StoredItem.isOlder) else { continue }
      if read.count > 1, writeLock.map({ path in WriteLock(path: path, keepWaiting: { false }) != nil }) ?? true {
        for other in read where other.item.path != newest.item.path { try? session.delete(other.item) }
      }
      guard let text = String(validating: newest.bytes, as: UTF8.self) else {
        throw StoreError.corrupt(item: key.description)
      }
      return Secret(text)
    }
    return nil  // found and gone again each time: deleted meanwhile
  }

  /// Stores `secret` under `key` as a new item, reads it back, then deletes the other unlocked
  /// items with the same attributes (by D-Bus path) unless their document is newer
  /// (`DocumentAge`: another writer's); all of it holding `writeLock`, when given and it can be
  /// taken in time. Matching items without a document (kwalletd leaves one behind when it cannot
  /// decrypt a new item's secret) are deleted before the write; after the deletes a search must
  /// find the new document, or it is written once more. The new item goes into the collection of the newest unlocked item it
  /// replaces, else into the `default` alias's (`LibsecretSession.writeCollection`): KeePassXC
  /// moves `default` with the active database, and a rotated token written elsewhere than its
  /// predecessor failed on a locked database after the provider had rotated it. The item is never written with
  /// `SECRET_ITEM_CREATE_REPLACE`: KeePassXC before 2.7.6 answers a replace with an access
  /// dialog, which nobody answers for a background refresh. Until the older items are deleted a
  /// reader finds two and takes the newer document; an older item that cannot be deleted is left
  /// for the next `load` (the new one is stored). A new item deleted right after the write (a
  /// `logout` racing it) counts as written and deleted.
  /// - Throws: `.noCollection` (no item to replace and no `default` alias), `.locked` (the
  ///   collection to write to is locked: no prompt is raised), `.readBackMismatch` (the new item
  ///   is deleted again, the older ones kept), `.unavailable`, `.timedOut`, `.backend`.
  public func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    try await perform { [writeLock] session throws(StoreError) in
      let lock = writeLock.flatMap { path in WriteLock(path: path, keepWaiting: { !session.deadline.expired }) }
      defer { withExtendedLifetime(lock) {} }
      let found = try session.stored(session.search(key.attributes).filter { !$0.isLocked })
      // Items without a document go first: kwalletd leaves one behind when it cannot decrypt a
      // CreateItem's secret (its attributes, no wallet entry) and gives the next item of the same
      // label that same wallet entry, so deleting the one left behind after the write deleted the
      // new item with it (the rotated refresh token was lost). One that cannot be deleted is kept.
      for empty in found where empty.bytes.isEmpty { try? session.delete(empty.item) }
      let older = found.filter { !$0.bytes.isEmpty }
      let collection = try session.writeCollection(beside: older.max(by: StoredItem.isOlder)?.item)
      let bytes = Array(secret.revealed.utf8)
      // Gone already: another process deleted it after the write (a `logout`), which stands.
      guard let made = try session.create(in: collection, attributes: key.attributes, label: label, text: secret.revealed),
        let back = try session.secret(of: made)
      else { return }
      guard back == bytes else {
        try? session.delete(made)
        throw StoreError.readBackMismatch
      }
      let age = DocumentAge(document: bytes)
      var deleted = false
      for other in older where other.item.path != made.path {
        if let age, let their = other.age, their.isNewer(than: age) { continue }
        try? session.delete(other.item)
        deleted = true
      }
      // A search must find the document now: a service that keys items by anything but their
      // D-Bus path may have deleted the new item with an older one (its path then reads another
      // document or none), and it is written once more. A new item that is gone was deleted by
      // another process (a `logout`), which stands.
      guard deleted, try !session.holds(bytes, key.attributes), try session.secret(of: made) != nil else { return }
      guard try session.create(in: collection, attributes: key.attributes, label: label, text: secret.revealed) != nil,
        try session.holds(bytes, key.attributes)
      else { throw StoreError.readBackMismatch }
    }
  }

  /// Deletes every unlocked item matching `key`, of any schema; succeeds when there is none.
  /// - Throws: `.locked` when a matching item is locked (after deleting the unlocked ones), or
  ///   none matches while the default collection is locked;
  ///   `.unavailable`, `.timedOut`, `.backend`.
  public func delete(_ key: ItemKey) async throws {
    try await perform { session throws(StoreError) in
      let items = try session.search(key.attributes, anySchema: true)
      var sawLocked = false
      for item in items {
        if item.isLocked { sawLocked = true } else { try session.delete(item) }
      }
      if sawLocked { throw try session.lockedItemsError(items) }
      if items.isEmpty, try session.defaultCollectionIsLocked() { throw StoreError.locked }
    }
  }

  /// The keys of all items with `application = tokenbroker` (and `account`, when given), of any
  /// schema (what `delete` removes), locked ones included when their attributes are readable (a
  /// collection locked after it was unlocked in this session), sorted by description.
  /// - Throws: `.locked` when a locked item shows only hashed attributes (a keyring still locked
  ///   on disk) or nothing matches while the default collection is locked; `.unavailable`,
  ///   `.timedOut`, `.backend`.
  public func keys(account: String?) async throws -> [ItemKey] {
    var query = [("application", "tokenbroker")]
    if let account { query.append(("account", account)) }
    return try await perform { [query] session throws(StoreError) in
      var keys = Set<ItemKey>()
      let items = try session.search(query, anySchema: true)
      for item in items {
        let a = item.attributes
        guard let account = a["account"], let kind = a["kind"].flatMap(ItemKind.init(rawValue:)) else {
          if item.isLocked { throw StoreError.locked }  // only hashed attributes: locked on disk
          continue
        }
        keys.insert(ItemKey(account: account, kind: kind, scopes: a["scopes"]))
      }
      if items.isEmpty, try session.defaultCollectionIsLocked() { throw StoreError.locked }
      return keys.sorted { $0.description < $1.description }
    }
  }

  /// Checks that `save` of `key` could store now: the collection it would write to (that of an
  /// unlocked item of `key`, else the `default` alias's) exists and is unlocked; and that no item
  /// of `key` is locked: a refresh checks this before it spends the token it read, and a locked
  /// copy (in another collection) may be newer than that one, which a provider that revokes the
  /// whole grant on reuse would then revoke (bug-cases-4.md Y17). Raises no prompt and writes
  /// nothing.
  /// - Throws: `.noCollection`, `.locked`, `.unavailable`, `.timedOut`, `.backend`.
  public func preflightWrite(for key: ItemKey?) async throws {
    try await perform { session throws(StoreError) in
      let present = try key.map { key throws(StoreError) in try session.search(key.attributes) } ?? []
      if present.contains(where: \.isLocked) { throw StoreError.locked }
      _ = try session.writeCollection(beside: present.first { !$0.isLocked })
    }
  }

  /// Unlocks the default collection for `login` on a terminal (`secret_service_unlock_sync`; the
  /// desktop may show a prompt). Returns at once when it is already unlocked.
  /// - Parameter timeout: seconds to wait for the user (`login-timeout`).
  /// - Throws: `.unlockDismissed`, `.unlockUnanswered` (the prompt is dismissed then),
  ///   `.noCollection`, `.unavailable`, `.backend`.
  public func unlock(timeout: Int) async throws {
    do {
      try await perform(milliseconds: max(1, timeout) * 1000) { session throws(StoreError) in
        guard let collection = try session.defaultCollection() else { throw StoreError.noCollection }
        if !session.isLocked(collection: collection) { return }
        if try !session.unlock(collection) { throw StoreError.unlockDismissed }
      }
    } catch StoreError.timedOut(let seconds) {
      // The service answered the checks before (login's preflight too): what did not answer is
      // the person the dialog was shown to.
      throw StoreError.unlockUnanswered(seconds: seconds)
    }
  }

  /// Runs one bounded operation on the libsecret queue (internal for the tests' hooks). The
  /// deadline starts now (time spent waiting behind other operations counts). The caller is
  /// answered `.timedOut` at the deadline plus 2 s even when libsecret ignores the cancellation.
  func perform<T: Sendable>(
    milliseconds: Int? = nil, _ body: @escaping @Sendable (LibsecretSession) throws(StoreError) -> T
  ) async throws -> T {
    let bound = milliseconds ?? timeoutMilliseconds
    let deadline = Deadline(milliseconds: bound)
    let hardBound = Double(bound + 2000) / 1000
    return try await BlockingQueue.run(
      on: Self.queue, timeout: hardBound, timeoutError: StoreError.timedOut(seconds: deadline.seconds)
    ) {
      defer { deadline.finish() }
      Self.keepOnlyCurrentConnection(deadline: deadline)
      var session = try LibsecretSession(deadline: deadline)
      var sessions = 1
      while true {
        do {
          do {
            return try body(session)
          } catch StoreError.locked {
            // A wallet KWallet opened at login reads locked until asked; asked, the operation runs again.
            guard try session.unlockWalletOpenedAtLogin() else { throw StoreError.locked }
            return try body(session)
          }
        } catch let error as StoreError
          where isSessionKeyMismatch(error) && sessions < Self.sessionAttempts && !deadline.expired
        {
          // A session whose key the service derived otherwise (kwalletd: about one in 170) can
          // neither read nor write: a new connection opens a new session, and the operation runs
          // again (a save whose item kwalletd left behind deletes it before writing: `save`).
          sessions += 1
          secret_service_disconnect()
          session = try LibsecretSession(deadline: deadline)
        }
      }
    }
  }

  /// How many sessions one operation opens at most while the service and libsecret disagree on
  /// their key (`isSessionKeyMismatch`).
  static let sessionAttempts = 3
}

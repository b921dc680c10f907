internal import BrokerCore
internal import BrokerWire
internal import CBrokerShims
internal import CLibsecret

/// All unsafe libsecret calls of one store operation, on the libsecret queue only (not Sendable).
///
/// Every call takes the operation's `Deadline` cancellable; every GError, GList, GHashTable and
/// SecretValue is released in the scope that receives it; `SecretItem`/`SecretCollection`
/// references are owned by `LibsecretObject`.
final class LibsecretSession {
  private let service: LibsecretObject
  let deadline: Deadline

  /// Connects (`secret_service_get_sync` with `SECRET_SERVICE_OPEN_SESSION`). A session key that
  /// kwalletd refuses for its length (`isShortKeyRefused`) is made again, up to three times: each
  /// try draws a new key pair, and one in 256 is short.
  /// - Throws: `.unavailable` (no session bus, no service), `.sessionRefused`, `.timedOut`.
  init(deadline: Deadline) throws(StoreError) {
    self.deadline = deadline
    var tries = 0
    while true {
      tries += 1
      var error: UnsafeMutablePointer<GError>?
      let s = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, deadline.cancellable, &error)
      if let e = error, tries < 4, !deadline.expired, isShortKeyRefused(e) {
        g_error_free(e)
        continue
      }
      if let error { throw consume(error, deadline: deadline, connecting: true) }
      guard let s else { throw StoreError.unavailable(detail: "no Secret Service object") }
      service = LibsecretObject(s)
      return
    }
  }

  private var servicePointer: UnsafeMutablePointer<SecretService> { service.pointer(SecretService.self) }

  /// Whether the Secret Service object libsecret keeps calls the daemon that owns the service's
  /// name now (`GetNameOwner`, asked of the bus): one made before a daemon replaced the last
  /// (`gnome-keyring-daemon --replace`) calls a unique name that is gone. False too when no daemon
  /// owns the name or the bus does not answer.
  static func keptServiceIsCurrent(deadline: Deadline) -> Bool {
    var error: UnsafeMutablePointer<GError>?
    let kept = secret_service_get_sync(SECRET_SERVICE_NONE, deadline.cancellable, &error)
    if let error { g_error_free(error) }
    guard let kept else { return false }
    defer { g_object_unref(kept) }
    let proxy = UnsafeMutableRawPointer(kept).assumingMemoryBound(to: GDBusProxy.self)
    guard let owner = g_dbus_proxy_get_name_owner(proxy) else { return false }
    defer { g_free(owner) }
    var name = g_variant_new_string(g_dbus_proxy_get_name(proxy))
    let reply = g_dbus_connection_call_sync(
      g_dbus_proxy_get_connection(proxy), "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
      "GetNameOwner", g_variant_new_tuple(&name, 1), nil, G_DBUS_CALL_FLAGS_NONE, -1, deadline.cancellable, &error)
    if let error { g_error_free(error) }
    guard let reply else { return false }
    defer { g_variant_unref(reply) }
    let current = g_variant_get_child_value(reply, 0)
    defer { g_variant_unref(current) }
    return strcmp(g_variant_get_string(current, nil), owner) == 0
  }

  /// The D-Bus path of the session the service has open, e.g. `/org/freedesktop/secrets/session/s3`:
  /// which connection an operation used (a new one opens a new session).
  var sessionPath: String? { secret_service_get_session_dbus_path(servicePointer).map { String(cString: $0) } }

  private func check(_ error: UnsafeMutablePointer<GError>?) throws(StoreError) {
    if let error { throw consume(error, deadline: deadline) }
  }

  /// Items matching `attributes`, locked ones included: `SECRET_SEARCH_ALL`, never
  /// `SECRET_SEARCH_UNLOCK`, so no prompt is raised (keyring-notes.md).
  ///
  /// The search passes no schema: gnome-keyring matches the items of a keyring that is locked on
  /// disk (not unlocked since the daemon started) by hashed attributes, and `xdg:schema` is not
  /// among them, so a schema search would miss them and report "absent". Unlocked items whose
  /// `xdg:schema` names another schema (an older writer's, secret-tool's Generic) are dropped
  /// unless `anySchema`: reading never takes them for tokenbroker's items, but `keys` and
  /// `delete` must see them, or `logout` leaves such copies behind.
  ///
  /// An item deleted between the service's answer and the load of its properties (a `logout`
  /// racing this call) fails the whole libsecret search; the search is then made again, after a
  /// pause that grows from 10 to 100 ms, for up to `searchRetryMilliseconds` (a logout deleting
  /// items while eight refreshing processes wrote theirs, on a loaded machine, outlasted three
  /// quick attempts and then eight, about 0.6 s: `token get` exited 5). The same error after
  /// that is not a race but a broken item or service, and is reported as it is, long before the
  /// store's own deadline.
  func search(_ attributes: [(String, String)], anySchema: Bool = false) throws(StoreError) -> [LibsecretItem] {
    let table = AttributeTable(attributes)
    var pause: UInt32 = 10_000  // µs
    let retryUntil = MonotonicClock.milliseconds + Self.searchRetryMilliseconds
    while true {
      var error: UnsafeMutablePointer<GError>?
      let list = secret_service_search_sync(
        servicePointer, nil, table.pointer, SECRET_SEARCH_ALL, deadline.cancellable, &error)
      var items: [LibsecretItem] = []
      var node = list
      while let n = node {  // the list owns one reference per item: hand it to LibsecretObject
        if let data = n.pointee.data { items.append(LibsecretItem(LibsecretObject(data))) }
        node = n.pointee.next
      }
      g_list_free(list)
      if let e = error, MonotonicClock.milliseconds < retryUntil, !deadline.expired, isNoSuchObject(e) {
        g_error_free(e)
        usleep(pause)  // this runs on the store's own thread, never on the cooperative pool
        pause = min(pause * 2, 100_000)
        continue
      }
      try check(error)
      if anySchema { return items }
      let schema = String(cString: cbroker_token_schema().pointee.name)
      return items.filter { $0.isLocked || ($0.attributes["xdg:schema"] ?? schema) == schema }
    }
  }

  /// The secret of the one unlocked item of tokenbroker's schema that matches `attributes`, found
  /// and read by D-Bus path as `secret-tool lookup` does (`SearchItems` with `xdg:schema`, then
  /// `GetSecrets` in the open session): no item proxy is made, which costs three more round trips
  /// and two signal subscriptions per item. Nil whenever that does not settle it: no unlocked
  /// item of the schema, more than one (duplicates), one gone before its secret was read, or a
  /// search that failed because an item vanished under it; `LibsecretStore.load` then searches
  /// with proxies and applies every rule. Locked items are not asked for here: one unlocked item
  /// serves whatever else is locked.
  func soleSecret(_ attributes: [(String, String)]) throws(StoreError) -> [UInt8]? {
    let table = AttributeTable(attributes)
    var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    var error: UnsafeMutablePointer<GError>?
    _ = secret_service_search_for_dbus_paths_sync(
      servicePointer, cbroker_token_schema(), table.pointer, deadline.cancellable, &unlocked, &locked, &error)
    defer {
      g_strfreev(unlocked)
      g_strfreev(locked)
    }
    if try vanished(error) { return nil }
    guard let unlocked, let path = unlocked[0], unlocked[1] == nil else { return nil }
    var readError: UnsafeMutablePointer<GError>?
    let value = secret_service_get_secret_for_dbus_path_sync(servicePointer, path, deadline.cancellable, &readError)
    if try vanished(readError) { return nil }
    guard let value else { return nil }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    var length = 0
    guard let bytes = secret_value_get(value, &length) else { return [] }
    return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
      Array(UnsafeBufferPointer(start: $0, count: length))
    }
  }

  /// How long, in ms, `search` is made again while items vanish under it.
  static let searchRetryMilliseconds = 3000

  /// Consumes `error` and returns true when it says the addressed item is gone (`isNoSuchObject`);
  /// any other error is thrown.
  private func vanished(_ error: UnsafeMutablePointer<GError>?) throws(StoreError) -> Bool {
    guard let error else { return false }
    if !deadline.expired, isNoSuchObject(error) {
      g_error_free(error)
      return true
    }
    throw consume(error, deadline: deadline)
  }

  /// True when the `default` collection exists and is locked: an empty search then proves nothing.
  func defaultCollectionIsLocked() throws(StoreError) -> Bool {
    guard let collection = try defaultCollection() else { return false }
    return isLocked(collection: collection)
  }

  /// The `default` alias collection, or nil when there is none (`secret_collection_for_alias_sync`).
  func defaultCollection() throws(StoreError) -> LibsecretObject? {
    var error: UnsafeMutablePointer<GError>?
    let c = secret_collection_for_alias_sync(
      servicePointer, "default", SECRET_COLLECTION_NONE, deadline.cancellable, &error)
    try check(error)
    return c.map { LibsecretObject($0) }
  }

  /// The collection a new item goes to: the one holding `item` (the copy it replaces), else the
  /// `default` alias's, whichever collection that names now.
  /// - Throws: `.noCollection` (neither), `.locked` (that collection is locked: no prompt).
  func writeCollection(beside item: LibsecretItem?) throws(StoreError) -> LibsecretObject {
    var collection: LibsecretObject?
    if let item {
      var error: UnsafeMutablePointer<GError>?
      let c = secret_collection_new_for_dbus_path_sync(
        servicePointer, item.collectionPath, SECRET_COLLECTION_NONE, deadline.cancellable, &error)
      if try !vanished(error) { collection = c.map { LibsecretObject($0) } }
    }
    if collection == nil { collection = try defaultCollection() }
    guard let collection else { throw StoreError.noCollection }
    if isLocked(collection: collection) { throw StoreError.locked }
    return collection
  }

  /// `items` with their documents (`secret(of:)`); an item deleted since it was found is left out.
  func stored(_ items: [LibsecretItem]) throws(StoreError) -> [StoredItem] {
    var read: [StoredItem] = []
    for item in items {
      if let bytes = try secret(of: item) { read.append(StoredItem(item: item, bytes: bytes)) }
    }
    return read
  }

  /// True when an unlocked item of tokenbroker's schema matching `attributes`, found by a new
  /// search, holds `bytes`.
  func holds(_ bytes: [UInt8], _ attributes: [(String, String)]) throws(StoreError) -> Bool {
    try stored(search(attributes).filter { !$0.isLocked }).contains { $0.bytes == bytes }
  }

  func isLocked(collection: LibsecretObject) -> Bool {
    secret_collection_get_locked(collection.pointer(SecretCollection.self)) != 0
  }

  /// Creates a new item, whatever items with the same attributes exist (`CreateItem` with
  /// `replace` false: KeePassXC before 2.7.6 answers a replace with an access dialog); `text` is
  /// stored as text/plain. Nil when the new item was deleted before libsecret could load it:
  /// another process deleted it right after the write (a `logout` racing it), which stands, as
  /// for an item gone at the read-back.
  func create(
    in collection: LibsecretObject, attributes: [(String, String)], label: String, text: String
  ) throws(StoreError) -> LibsecretItem? {
    let table = AttributeTable(attributes)
    let bytes = Array(text.utf8)
    let made = bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        secret_value_new($0.baseAddress, gssize($0.count), "text/plain")
      }
    }
    guard let value = made else { throw StoreError.backend(detail: "libsecret could not hold the value") }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    var error: UnsafeMutablePointer<GError>?
    let item = secret_item_create_sync(
      collection.pointer(SecretCollection.self), cbroker_token_schema(), table.pointer, label, value,
      SECRET_ITEM_CREATE_NONE, deadline.cancellable, &error)
    // Only libsecret's own load of the new item's properties failing counts as "deleted at
    // once"; an error of CreateItem itself (a collection gone or replaced, a service without the
    // method) is the keyring's failure, and is thrown: the value was not stored.
    if let e = error, !deadline.expired, isCreatedItemGone(e) {
      g_error_free(e)
      return nil
    }
    try check(error)
    guard let item else { throw StoreError.backend(detail: "the Secret Service created no item") }
    return LibsecretItem(LibsecretObject(item))
  }

  /// The secret bytes of an unlocked item, fetched from the service (`secret_item_load_secret_sync`),
  /// or nil when the item is gone (deleted by another process since it was found).
  func secret(of item: LibsecretItem) throws(StoreError) -> [UInt8]? {
    var error: UnsafeMutablePointer<GError>?
    _ = secret_item_load_secret_sync(item.pointer, deadline.cancellable, &error)
    if try vanished(error) { return nil }
    guard let value = secret_item_get_secret(item.pointer) else {
      throw StoreError.backend(detail: "the Secret Service returned no secret for \(item.path)")
    }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    var length = 0
    guard let bytes = secret_value_get(value, &length) else { return [] }
    return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
      Array(UnsafeBufferPointer(start: $0, count: length))
    }
  }

  /// Deletes the item; one that is already gone counts as deleted.
  func delete(_ item: LibsecretItem) throws(StoreError) {
    var error: UnsafeMutablePointer<GError>?
    _ = secret_item_delete_sync(item.pointer, deadline.cancellable, &error)
    _ = try vanished(error)
  }

  /// The error for matching `items` that read locked: `.itemsWithheld` when locked ones are in
  /// the default collection and it reads unlocked (the provider holds each item back until the
  /// user allows this program: KeePassXC), else `.locked`.
  func lockedItemsError(_ items: [LibsecretItem]) throws(StoreError) -> StoreError {
    guard let collection = try defaultCollection(), !isLocked(collection: collection) else { return .locked }
    let proxy = collection.pointer(GDBusProxy.self)
    guard let path = g_dbus_proxy_get_object_path(proxy).map({ String(cString: $0) + "/" }) else { return .locked }
    return items.contains { $0.isLocked && $0.path.hasPrefix(path) } ? .itemsWithheld : .locked
  }

  /// Unlocks the wallet kwalletd (KDE Frameworks 5 and 6) has open but offers locked: pam_kwallet
  /// opens the wallet at a Plasma login, and kwalletd's Secret Service reads its collection locked
  /// until some client asks to unlock it, which kwalletd then grants without a dialog (README
  /// "Keyrings"). True when the service is kwalletd (it owns `org.kde.kwalletd5` or `…6` too), the
  /// default collection reads locked, kwalletd says that wallet is open (`org.kde.KWallet.isOpen`
  /// of the collection's label, the wallet's name), and the unlock went through. False, having
  /// asked the Secret Service nothing, for any other provider or a wallet kwalletd has closed (its
  /// unlock would show the password dialog).
  func unlockWalletOpenedAtLogin() throws(StoreError) -> Bool {
    guard let collection = try defaultCollection(), isLocked(collection: collection) else { return false }
    let proxy = UnsafeMutableRawPointer(servicePointer).assumingMemoryBound(to: GDBusProxy.self)
    guard let connection = g_dbus_proxy_get_connection(proxy), let owner = g_dbus_proxy_get_name_owner(proxy),
      let label = secret_collection_get_label(collection.pointer(SecretCollection.self))
    else { return false }
    defer {
      g_free(owner)
      g_free(label)
    }
    for (name, path) in [("org.kde.kwalletd5", "/modules/kwalletd5"), ("org.kde.kwalletd6", "/modules/kwalletd6")] {
      guard let reply = call(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
        "GetNameOwner", g_variant_new_string(name))
      else { continue }
      let walletOwner = g_variant_get_child_value(reply, 0)
      let same = strcmp(g_variant_get_string(walletOwner, nil), owner) == 0
      g_variant_unref(walletOwner)
      g_variant_unref(reply)
      guard same else { continue }
      guard let open = call(connection, name, path, "org.kde.KWallet", "isOpen", g_variant_new_string(label)) else {
        return false
      }
      defer { g_variant_unref(open) }
      guard strcmp(g_variant_get_type_string(open), "(b)") == 0 else { return false }
      let flag = g_variant_get_child_value(open, 0)
      defer { g_variant_unref(flag) }
      guard g_variant_get_boolean(flag) != 0 else { return false }
      return try unlock(collection)
    }
    return false
  }

  /// One D-Bus call of one argument on `connection`, bounded by the deadline; its reply, or nil
  /// when it failed (the error is dropped: the caller only asks).
  private func call(
    _ connection: OpaquePointer, _ destination: String, _ path: String, _ interface: String, _ method: String,
    _ argument: OpaquePointer
  ) -> OpaquePointer? {
    var argument: OpaquePointer? = argument
    var error: UnsafeMutablePointer<GError>?
    let reply = g_dbus_connection_call_sync(
      connection, destination, path, interface, method, g_variant_new_tuple(&argument, 1), nil,
      G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, deadline.cancellable, &error)
    if let error { g_error_free(error) }
    return reply
  }

  /// Asks the service to unlock `collection` (may show a prompt); false when it was dismissed.
  func unlock(_ collection: LibsecretObject) throws(StoreError) -> Bool {
    let objects = g_list_append(nil, collection.raw)
    defer { g_list_free(objects) }
    var unlocked: UnsafeMutablePointer<GList>?
    var error: UnsafeMutablePointer<GError>?
    let count = secret_service_unlock_sync(servicePointer, objects, deadline.cancellable, &unlocked, &error)
    g_list_free_full(unlocked, g_object_unref)
    try check(error)
    return count > 0
  }
}

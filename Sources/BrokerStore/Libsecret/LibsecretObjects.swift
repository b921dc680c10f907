internal import BrokerCore
internal import CLibsecret

/// Owns one GObject reference (a `SecretService`, `SecretCollection` or `SecretItem`) and drops it
/// in `deinit`. Used on the libsecret queue only.
final class LibsecretObject {
  let raw: UnsafeMutableRawPointer

  /// Takes over a reference the caller owns (transfer full).
  init<T>(_ pointer: UnsafeMutablePointer<T>) { raw = UnsafeMutableRawPointer(pointer) }
  init(_ pointer: UnsafeMutableRawPointer) { raw = pointer }
  deinit { g_object_unref(raw) }

  func pointer<T>(_: T.Type) -> UnsafeMutablePointer<T> { raw.assumingMemoryBound(to: T.self) }
}

/// A `SecretItem` proxy with the properties tokenbroker reads (cached by libsecret; reading them
/// makes no D-Bus call and needs no unlock).
struct LibsecretItem {
  let object: LibsecretObject
  init(_ object: LibsecretObject) { self.object = object }

  var pointer: UnsafeMutablePointer<SecretItem> { object.pointer(SecretItem.self) }

  /// `Locked` (secret_item_get_locked).
  var isLocked: Bool { secret_item_get_locked(pointer) != 0 }

  /// `Modified`, Unix seconds (secret_item_get_modified).
  var modified: UInt64 { UInt64(secret_item_get_modified(pointer)) }

  /// The D-Bus object path, e.g. `/org/freedesktop/secrets/collection/login/3`.
  var path: String {
    g_dbus_proxy_get_object_path(object.pointer(GDBusProxy.self)).map { String(cString: $0) } ?? "?"
  }

  /// The D-Bus path of the collection holding the item: its path without the last element
  /// (the Secret Service API's object paths: `/org/freedesktop/secrets/collection/NAME/ITEM`).
  var collectionPath: String {
    let p = path
    return p.lastIndex(of: "/").map { String(p[..<$0]) } ?? p
  }

  /// The item's attributes (secret_item_get_attributes).
  var attributes: [String: String] {
    guard let table = secret_item_get_attributes(pointer) else { return [:] }
    defer { g_hash_table_unref(table) }
    var result: [String: String] = [:]
    var iter = GHashTableIter()
    g_hash_table_iter_init(&iter, table)
    var key: gpointer?
    var value: gpointer?
    while g_hash_table_iter_next(&iter, &key, &value) != 0 {
      guard let key, let value else { continue }
      result[String(cString: key.assumingMemoryBound(to: CChar.self))] =
        String(cString: value.assumingMemoryBound(to: CChar.self))
    }
    return result
  }
}

/// An unlocked item with the document it holds, as `LibsecretStore.load` weighs duplicates.
struct StoredItem {
  let item: LibsecretItem
  let bytes: [UInt8]
  let age: DocumentAge?

  init(item: LibsecretItem, bytes: [UInt8]) {
    self.item = item
    self.bytes = bytes
    age = DocumentAge(document: bytes)
  }

  /// True when `a` is older than `b`: by their documents (`DocumentAge`; one that does not tell is
  /// older than one that does), between documents of the same age by `Modified` (whole seconds),
  /// then by D-Bus path, longer then larger (gnome-keyring numbers its items in order; other
  /// services' paths, KeePassXC's UUIDs, order nothing).
  static func isOlder(_ a: StoredItem, _ b: StoredItem) -> Bool {
    let (ageA, ageB) = (a.age, b.age)
    if ageA != ageB {
      guard let ageA else { return true }
      guard let ageB else { return false }
      return ageA < ageB
    }
    if a.item.modified != b.item.modified { return a.item.modified < b.item.modified }
    let (pa, pb) = (a.item.path, b.item.path)
    return pa.count != pb.count ? pa.count < pb.count : pa < pb
  }
}

/// A `GHashTable` of string attributes (g_str_hash/g_str_equal, keys and values g_free'd),
/// unreferenced in `deinit`.
final class AttributeTable {
  let pointer: OpaquePointer

  init(_ attributes: [(String, String)]) {
    pointer = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
    for (key, value) in attributes {
      _ = g_hash_table_insert(pointer, g_strdup(key), g_strdup(value))
    }
  }
  deinit { g_hash_table_unref(pointer) }
}

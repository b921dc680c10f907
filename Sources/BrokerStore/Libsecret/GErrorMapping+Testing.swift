internal import BrokerCore
internal import CLibsecret

/// Hooks for BrokerStoreTests (`@testable import`): the error mapping of `GErrorMapping.swift`
/// given a D-Bus error as a Secret Service sends it (its name and message, made into the GError
/// GDBus makes of such a reply).
enum GErrorMappingProbe {
  /// What `consume` makes of the error `name` with `message`, met while connecting or not.
  static func storeError(_ name: String, _ message: String, connecting: Bool) -> StoreError {
    let deadline = Deadline(milliseconds: 10_000)
    defer { deadline.finish() }
    return consume(g_dbus_error_new_for_dbus_error(name, message), deadline: deadline, connecting: connecting)
  }

  /// `isNoSuchObject` of that error.
  static func isNoSuchObject(_ name: String, _ message: String) -> Bool {
    let error = g_dbus_error_new_for_dbus_error(name, message)!
    defer { g_error_free(error) }
    return BrokerStore.isNoSuchObject(error)
  }

  /// `isShortKeyRefused` of that error.
  static func isShortKeyRefused(_ name: String, _ message: String) -> Bool {
    let error = g_dbus_error_new_for_dbus_error(name, message)!
    defer { g_error_free(error) }
    return BrokerStore.isShortKeyRefused(error)
  }
}
